//! The model writer the external tools use (deep search answers): one
//! request to the profile's provider with the instructions as the system
//! prompt, the material as the user's message and no tools, over the real
//! OpenAI-compatible client against a fake server.

use quire_agent::testing::{openai_stream, serve, system_of};
use quire_agent::{ModelWriter, Profile, ProviderKind};
use quire_tools::external::Writer;

#[tokio::test]
async fn the_writer_sends_instructions_and_material_and_answers_the_text() {
    let (fake, base) = serve().await;
    let mut profile = Profile::new(ProviderKind::Openai);
    profile.base_url = Some(format!("{base}/v1"));
    profile.model = Some("writer-model".into());
    profile.retries = 0;
    let writer = ModelWriter::of(&profile).unwrap();
    fake.push(openai_stream("Tides rise twice a day [1].", &[]));
    let answer =
        writer.write("Cite sources by number.", "<untrusted source=\"https://a.example\">tides</untrusted>").await;
    assert_eq!(answer.as_deref(), Ok("Tides rise twice a day [1]."));
    let request = &fake.requests()[0];
    assert_eq!(request["model"], "writer-model");
    assert_eq!(system_of(request), "Cite sources by number.");
    let user = request["messages"].as_array().unwrap().iter().find(|m| m["role"] == "user").unwrap();
    assert!(user["content"].as_str().unwrap().contains("<untrusted source=\"https://a.example\">"));
    assert!(request.get("tools").is_none_or(|t| t.as_array().is_none_or(|a| a.is_empty())), "{request}");
    // A provider failure is the writer's error, not a panic.
    assert!(writer.write("x", "y").await.is_err());
}
