//! Two processes over one database (replicas on one PostgreSQL, or two
//! processes on one SQLite file): a turn's events reach streams opened in
//! either, an answered approval resumes the turn in exactly one, and a turn
//! whose process stopped is finished by the other.

mod support;

use quire_agent::Event;
use quire_core::model::SessionStatus;
use std::time::Duration;
use support::*;

fn ids(events: &[Event]) -> Vec<u64> {
    events.iter().map(|e| e.id).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_run_in_one_process_streams_from_another() {
    let env = Env::openai().await;
    let (b, c) = (env.replica().await, env.replica().await);
    env.fake.push(openai_stream("", &[("c1", "getPage", r#"{"slug":"about"}"#)]));
    env.fake.push(openai_stream("About is a draft.", &[]));
    let session = env.turn("is about published?", None).await;
    env.runtime.flush_events().await;
    let here = env.runtime.events().history(&session);
    assert_eq!(here.first().unwrap().kind(), "RUN_STARTED");

    // Reconnecting elsewhere with Last-Event-ID gets what followed it.
    let (after, _) = b.runtime.subscribe(&session, Some(here[3].id)).await.unwrap();
    assert_eq!(ids(&after), ids(&here[4..]));
    assert_eq!(
        after.iter().map(|e| &e.data).collect::<Vec<_>>(),
        here[4..].iter().map(|e| &e.data).collect::<Vec<_>>()
    );
    // Without it, the latest run from its start.
    let (all, _) = c.runtime.subscribe(&session, None).await.unwrap();
    assert_eq!(ids(&all), ids(&here));
    assert_eq!(all.last().unwrap().data["outcome"]["type"], "success");

    // A stream open elsewhere follows the next turn as it runs here.
    let (_, mut live) = b.runtime.subscribe(&session, None).await.unwrap();
    env.fake.push(openai_stream("Still a draft.", &[]));
    env.turn("and now?", Some(&session)).await;
    let mut followed = Vec::new();
    while followed.last().is_none_or(|e: &Event| e.kind() != "RUN_FINISHED") {
        let event = tokio::time::timeout(Duration::from_secs(10), live.recv()).await.expect("events follow").unwrap();
        followed.push(event);
    }
    let history = env.runtime.events().history(&session);
    let second = history.iter().rposition(|e| e.kind() == "RUN_STARTED").unwrap();
    assert_eq!(ids(&followed), ids(&history[second..]), "every event of the run, once, in order");
    let text: String = followed
        .iter()
        .filter(|e| e.kind() == "TEXT_MESSAGE_CONTENT")
        .map(|e| e.data["delta"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Still a draft.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_answered_elsewhere_resumes_the_turn_in_exactly_one_process() {
    let env = Env::openai().await;
    let b = env.replica().await;
    let contact = env.page_id("contact").await;
    env.delete_page(&contact);
    env.fake.push(openai_stream("Archived.", &[]));
    let session = env.turn("delete the contact page", None).await;
    let s = env.store.session(&env.scope, &session).await.unwrap();
    assert_eq!(s.status, SessionStatus::Paused);
    let approval = s.pending[0]["approvalId"].as_str().unwrap().to_string();
    // Answered through the other process's registry.
    b.registry.approve(&approver(&env), &approval).await.unwrap();
    // Both processes sweep at once: one of them resumes the turn.
    let (x, y) = tokio::join!(env.runtime.sweep(), b.runtime.sweep());
    assert_eq!(x + y, 1, "resumed once: {x} here, {y} there");
    env.wait_idle(&session).await;
    assert_eq!(env.fake.requests().len(), 2, "the model was asked once after the answer");
    assert!(env.store.page(&env.scope, &contact).await.is_err(), "archived");
    let (x, y) = tokio::join!(env.runtime.sweep(), b.runtime.sweep());
    assert_eq!(x + y, 0, "nothing left to resume");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_whose_process_stopped_is_finished_by_another() {
    let env = Env::openai().await;
    // Taken over 2.5 s after the stopped process's last heartbeat.
    env.runtime.set_runner_silent(Duration::from_millis(2500));
    let a = env.replica().await;
    env.fake.push(openai_stream("", &[("c1", "searchTools", r#"{"query":"create page"}"#)]));
    env.fake.push(openai_stream("", &[("c2", "createPage", r#"{"name":"Launch","slug":"launch"}"#)]));
    // The process stops while the model writes its next step.
    env.fake.push(Reply::Delayed(Duration::from_secs(120), Box::new(openai_stream("never", &[]))));
    env.fake.push(openai_stream("Made the launch page.", &[]));
    let started = a.runtime.start(&env.person(), "editor", "make a launch page", None, None, None).await.unwrap();
    let session = started.session_id.clone();
    for _ in 0..200 {
        if env.fake.requests().len() == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(env.fake.requests().len(), 3, "the stopping process asked for its third step");
    let page = env.store.page_by_slug(&env.scope, "launch").await.unwrap();
    started.handle.abort();
    assert!(started.handle.await.unwrap_err().is_cancelled());
    drop(a);
    assert_eq!(env.runtime.sweep().await, 0, "not while its heartbeat is recent");

    let mut taken = 0;
    for _ in 0..100 {
        taken += env.runtime.sweep().await;
        if taken > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(taken, 1, "taken over");
    env.wait_idle(&session).await;
    let requests = env.fake.requests();
    assert_eq!(requests.len(), 4);
    let told = requests[3]["messages"].to_string();
    assert!(told.contains("stopped") && told.contains(&page.id), "the model is told what the turn did: {told}");
    let events = env.runtime.events().history(&session);
    assert_eq!(events.last().unwrap().data["outcome"]["type"], "success");
    let text: String = events
        .iter()
        .filter(|e| e.kind() == "TEXT_MESSAGE_CONTENT")
        .map(|e| e.data["delta"].as_str().unwrap())
        .collect();
    assert!(text.contains("Made the launch page."), "{text}");
    // The page was made once, and the turn's one change is still its.
    let filter = quire_store::ChangeFilter { session_id: Some(session.clone()), ..Default::default() };
    let changes = env.store.changes(&env.scope, &filter, 10, None).await.unwrap().items;
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0].entity_id, page.id);
    assert_eq!(env.runtime.sweep().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_turn_in_a_long_model_call_is_not_taken_over() {
    let env = Env::openai().await;
    env.runtime.set_runner_silent(Duration::from_secs(3));
    let a = env.replica().await;
    // Longer than the silence a take-over waits for; the process beats meanwhile.
    env.fake.push(Reply::Delayed(Duration::from_secs(6), Box::new(openai_stream("Slow but here.", &[]))));
    let started = a.runtime.start(&env.person(), "editor", "take your time", None, None, None).await.unwrap();
    let session = started.session_id.clone();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while env.store.session(&env.scope, &session).await.unwrap().status == SessionStatus::Running {
        assert_eq!(env.runtime.sweep().await, 0, "a live turn is not taken over");
        assert!(std::time::Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    started.handle.await.unwrap();
    assert_eq!(env.store.session(&env.scope, &session).await.unwrap().status, SessionStatus::Idle);
    assert_eq!(env.fake.requests().len(), 1);
    assert_eq!(a.runtime.events().history(&session).last().unwrap().data["outcome"]["type"], "success");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_whose_turn_was_taken_over_runs_nothing_more_of_it() {
    let env = Env::openai().await;
    let a = env.replica().await;
    a.runtime.set_runner_silent(Duration::from_secs(2));
    // A's first step runs and is written; while A waits for its model in
    // the second (as if stalled), B takes the turn.
    env.fake.push(openai_stream("", &[("c0", "getPage", r#"{"slug":"about"}"#)]));
    let args = r#"{"name":"Late","slug":"late"}"#;
    env.fake
        .push(Reply::Delayed(Duration::from_millis(2500), Box::new(openai_stream("", &[("c1", "createPage", args)]))));
    let started = a.runtime.start(&env.person(), "editor", "make a late page", None, None, None).await.unwrap();
    let session = started.session_id.clone();
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(env.fake.requests().len(), 2, "A is in its second step");
    let taken = env.store.take_over_session(&env.scope, &session, a.store.replica(), Duration::ZERO).await.unwrap();
    assert!(taken);
    tokio::time::timeout(Duration::from_secs(20), started.handle).await.unwrap().unwrap();
    assert!(env.store.page_by_slug(&env.scope, "late").await.is_err(), "the call was not run");
    let kinds: Vec<String> = a.runtime.events().history(&session).iter().map(|e| e.kind().to_string()).collect();
    assert!(!kinds.iter().any(|k| k == "RUN_FINISHED" || k == "RUN_ERROR"), "it ends without a word: {kinds:?}");
    let results = kinds.iter().filter(|k| *k == "TOOL_CALL_RESULT").count();
    assert_eq!(results, 1, "only the first step's call ran: {kinds:?}");
    let s = env.store.session(&env.scope, &session).await.unwrap();
    assert_eq!(s.status, SessionStatus::Running, "the taker runs it now");
}
