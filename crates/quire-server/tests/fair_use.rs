//! Fair use kept in the database: the sign-in lockout counts every
//! replica's tries and survives a restart.

use quire_app::people::{self, SignIn, Throttle};
use quire_store::Store;

/// Wrong passwords until the email is locked; a restart keeps the lock.
#[tokio::test]
async fn the_sign_in_lockout_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("quire.db");
    let store = Store::open(&path).await.unwrap();
    let throttle = Throttle::default();
    for _ in 0..5 {
        let answer = people::sign_in(&store, &throttle, "Ada@example.org", "not the password", None).await.unwrap();
        assert!(matches!(answer, SignIn::Refused));
    }
    let answer = people::sign_in(&store, &throttle, "ada@example.org", "not the password", None).await.unwrap();
    assert!(matches!(answer, SignIn::Locked(_)), "the fifth failure locked it");
    store.close().await;

    let store = Store::open(&path).await.unwrap();
    let answer =
        people::sign_in(&store, &Throttle::default(), "ada@example.org", "not the password", None).await.unwrap();
    let SignIn::Locked(wait) = answer else { panic!("a restart forgot the lock") };
    assert!(wait.as_secs() <= 30 && wait.as_secs() >= 20, "{wait:?}");
    // Another email is not locked.
    let answer =
        people::sign_in(&store, &Throttle::default(), "bob@example.org", "not the password", None).await.unwrap();
    assert!(matches!(answer, SignIn::Refused));
    store.close().await;
}
