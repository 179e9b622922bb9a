//! Every parameter a tool accepts is in the schema it publishes, and the
//! other way round: read from the refusal of an unknown parameter, which
//! lists the accepted ones.

mod common;
use common::Env;
use serde_json::{Value, json};
use std::collections::BTreeSet;

#[tokio::test]
async fn the_published_schema_names_exactly_the_accepted_parameters() {
    let env = Env::new().await;
    let mut checked = 0;
    for tool in env.registry.tools() {
        let result = env.call(tool.name, json!({ "zzProbe": 1 })).await;
        let error = result["error"].as_str().unwrap_or_default();
        let Some(accepted) =
            error.strip_prefix("zzProbe: unknown parameter (accepted: ").and_then(|r| r.strip_suffix(')'))
        else {
            continue;
        };
        let accepted: BTreeSet<&str> = accepted.split(", ").collect();
        let schema = env.registry.schema(tool.name).unwrap();
        let published: BTreeSet<&str> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .filter(|k| !["confirmationId", "confirmed"].contains(k))
            .collect();
        assert_eq!(published, accepted, "{}: {}", tool.name, Value::from(error));
        checked += 1;
    }
    assert!(checked >= 35, "most tools refuse an unknown parameter by name: {checked}");
    let fetch = &env.registry.schema("fetchContent").unwrap()["properties"]["format"];
    assert_eq!(fetch["enum"], json!(["markdown", "text"]), "{fetch}");
}
