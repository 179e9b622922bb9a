//! JSON merge patch (RFC 7386): how every update merges `content` and `meta`.

use serde_json::Value;

/// Applies `patch` to `target` in place: objects merge key by key, a key set
/// to `null` is removed, anything else replaces the target value.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch_map) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(serde_json::Map::new());
    }
    if let Value::Object(target_map) = target {
        for (key, value) in patch_map {
            if value.is_null() {
                target_map.remove(key);
            } else {
                merge_patch(target_map.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn rfc7386_examples() {
        let cases = [
            (json!({"a":"b"}), json!({"a":"c"}), json!({"a":"c"})),
            (json!({"a":"b"}), json!({"b":"c"}), json!({"a":"b","b":"c"})),
            (json!({"a":"b"}), json!({"a":null}), json!({})),
            (json!({"a":"b","b":"c"}), json!({"a":null}), json!({"b":"c"})),
            (json!({"a":["b"]}), json!({"a":"c"}), json!({"a":"c"})),
            (json!({"a":"c"}), json!({"a":["b"]}), json!({"a":["b"]})),
            (json!({"a":{"b":"c"}}), json!({"a":{"b":"d","c":null}}), json!({"a":{"b":"d"}})),
            (json!({"a":[{"b":"c"}]}), json!({"a":[1]}), json!({"a":[1]})),
            (json!(["a", "b"]), json!(["c", "d"]), json!(["c", "d"])),
            (json!({"a":"b"}), json!(["c"]), json!(["c"])),
            (json!({"e":null}), json!({"a":1}), json!({"e":null,"a":1})),
            (json!([1, 2]), json!({"a":"b","c":null}), json!({"a":"b"})),
            (json!({}), json!({"a":{"bb":{"ccc":null}}}), json!({"a":{"bb":{}}})),
        ];
        for (mut target, patch, expected) in cases {
            merge_patch(&mut target, &patch);
            assert_eq!(target, expected);
        }
    }

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            any::<bool>().prop_map(Value::from),
            any::<i32>().prop_map(Value::from),
            "[a-z]{0,6}".prop_map(Value::from),
        ]
    }

    fn object() -> impl Strategy<Value = Value> {
        leaf().prop_recursive(3, 24, 4, |inner| {
            prop::collection::btree_map("[a-d]", inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect()))
        })
    }

    proptest! {
        /// Patching with the same patch twice changes nothing the second time.
        #[test]
        fn idempotent(mut target in object(), patch in object()) {
            merge_patch(&mut target, &patch);
            let once = target.clone();
            merge_patch(&mut target, &patch);
            prop_assert_eq!(once, target);
        }

        /// Every non-null key of an object patch ends up in the result, and
        /// every null key is gone.
        #[test]
        fn keys_set_and_removed(mut target in object(), patch in object()) {
            merge_patch(&mut target, &patch);
            if let (Value::Object(patch), Value::Object(result)) = (&patch, &target) {
                for (k, v) in patch {
                    if v.is_null() { prop_assert!(!result.contains_key(k)); }
                    else if !v.is_object() { prop_assert_eq!(result.get(k), Some(v)); }
                }
            }
        }

        /// An empty patch leaves an object untouched.
        #[test]
        fn empty_patch_is_identity(target in object()) {
            let mut t = target.clone();
            merge_patch(&mut t, &serde_json::json!({}));
            if target.is_object() { prop_assert_eq!(t, target); }
        }
    }
}
