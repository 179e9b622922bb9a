//! The MCP server spoken to as a client would, in JSON-RPC over an in-memory
//! pipe: declared capabilities, per-tool output schemas that real results
//! match, resource templates that read, completions, protocol errors for
//! unknown tools and batches, progress notifications, and the conformance
//! suite's test fixture only where it was asked for.

use quire_core::access::Group;
use quire_core::model::Surface;
use quire_mcp::{Caller, QuireMcp, ToolMode};
use quire_tools::{CallContext, Registry, Services};
use rmcp::ServiceExt;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf};

struct Client {
    writer: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    next_id: u64,
    /// The server's answer to initialize.
    init: Value,
    registry: Arc<Registry>,
    _dir: tempfile::TempDir,
}

impl Client {
    async fn start(mode: ToolMode) -> Self {
        Self::serve(mode, false).await
    }

    /// A server with the conformance suite's test fixture.
    async fn with_fixture() -> Self {
        Self::serve(ToolMode::All, true).await
    }

    async fn serve(mode: ToolMode, fixture: bool) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = quire_store::testing::open(dir.path()).await.unwrap();
        let scope = quire_store::seed::seed_demo(&store, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
        let registry = Arc::new(Registry::new(Services::new(store, dir.path())));
        quire_tools::notes::seed_demo_vault(registry.services(), &scope).await.unwrap();
        let ctx = CallContext::new("local:admin", Group::Admin, scope, Surface::Mcp);
        let (client_io, server_io) = tokio::io::duplex(1 << 20);
        let server = QuireMcp::new(Arc::clone(&registry), Caller::Fixed(Box::new(ctx)), mode);
        let server = if fixture { server.with_test_fixture() } else { server };
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let (read, writer) = tokio::io::split(client_io);
        let mut client =
            Client { writer, lines: BufReader::new(read).lines(), next_id: 0, init: Value::Null, registry, _dir: dir };
        let init = client
            .request(
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
            )
            .await;
        assert!(init.get("result").is_some(), "{init}");
        client.init = init["result"].clone();
        client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        client
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.writer.write_all(line.as_bytes()).await.unwrap();
        self.writer.flush().await.unwrap();
    }

    /// Sends a request and answers its response (result or error),
    /// skipping notifications the server sends meanwhile.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.request_noting(method, params).await.0
    }

    /// Sends a request and answers its response with the notifications the
    /// server sent before it.
    async fn request_noting(&mut self, method: &str, params: Value) -> (Value, Vec<Value>) {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        let mut notifications = Vec::new();
        loop {
            let message = self.next_message().await;
            if message["id"] == id {
                return (message, notifications);
            }
            if message.get("id").is_none() && message.get("method").is_some() {
                notifications.push(message);
            }
        }
    }

    async fn next_message(&mut self) -> Value {
        let line = self.lines.next_line().await.unwrap().expect("the server closed the pipe");
        serde_json::from_str(&line).unwrap()
    }

    async fn result(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params).await;
        assert!(response.get("error").is_none(), "{method}: {response}");
        response["result"].clone()
    }

    async fn error(&mut self, method: &str, params: Value) -> String {
        let response = self.request(method, params).await;
        response["error"]["message"].as_str().unwrap_or_else(|| panic!("{method} should fail: {response}")).to_string()
    }
}

#[tokio::test]
async fn capabilities_are_what_the_server_answers() {
    let mut client = Client::start(ToolMode::All).await;
    let init = client.init.clone();
    let caps = &init["capabilities"];
    for capability in ["tools", "prompts", "resources", "completions"] {
        assert!(caps.get(capability).is_some(), "{capability} not advertised: {caps}");
    }
    // logging and subscriptions are the test fixture's only (docs/mcp.md)
    assert!(caps.get("logging").is_none(), "{caps}");
    assert!(caps["resources"].get("subscribe").is_none(), "{caps}");
    let instructions = init["instructions"].as_str().unwrap();
    assert!(instructions.contains("quire://pages/{slug}") && instructions.contains("browseImages"));
    // a method whose capability is not advertised is not answered
    let refused = client.request("logging/setLevel", json!({"level": "info"})).await;
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
    let refused = client.request("resources/subscribe", json!({"uri": "quire://pages/about"})).await;
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
}

#[tokio::test]
async fn unknown_tools_are_a_protocol_error() {
    let mut client = Client::start(ToolMode::All).await;
    let unknown = client.request("tools/call", json!({"name": "getWidget", "arguments": {}})).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert!(unknown["error"]["message"].as_str().unwrap().contains("unknown tool: getWidget"), "{unknown}");
    // the meta-tool exists in discover mode only
    let unknown = client.request("tools/call", json!({"name": "useTool", "arguments": {}})).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    // a tool's own failure stays a result
    let missing = client.result("tools/call", json!({"name": "getPage", "arguments": {"slug": "missing"}})).await;
    assert_eq!(missing["isError"], true, "{missing}");

    // A tool this connection was not offered is unknown to it.
    let mut read_only = Client::start(ToolMode::ReadOnly).await;
    let hidden = read_only.request("tools/call", json!({"name": "createPage", "arguments": {"name": "X"}})).await;
    assert_eq!(hidden["error"]["code"], -32602, "{hidden}");
    assert!(hidden["error"]["message"].as_str().unwrap().contains("not offered to this client"), "{hidden}");

    // Through useTool, a wrong name is the meta-tool's result, for the model to read.
    let mut discover = Client::start(ToolMode::Discover).await;
    let used = discover
        .result("tools/call", json!({"name": "useTool", "arguments": {"name": "getWidget", "arguments": {}}}))
        .await;
    assert_eq!(used["isError"], true, "{used}");
    assert_eq!(used["structuredContent"]["success"], false, "{used}");
}

#[tokio::test]
async fn a_batch_is_an_invalid_request_and_the_session_goes_on() {
    let mut client = Client::start(ToolMode::All).await;
    client
        .send(json!([{"jsonrpc": "2.0", "id": 90, "method": "ping"}, {"jsonrpc": "2.0", "id": 91, "method": "ping"}]))
        .await;
    let refused = client.next_message().await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    // nothing of the batch ran, and the next request is answered
    let ping = client.request("ping", json!({})).await;
    assert_eq!(ping["result"], json!({}), "{ping}");
}

#[tokio::test]
async fn progress_is_notified_when_the_client_asks_for_it() {
    let mut client = Client::with_fixture().await;
    let call = json!({"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "p-1"}});
    let (answer, notifications) = client.request_noting("tools/call", call).await;
    assert!(answer.get("result").is_some(), "{answer}");
    let progress: Vec<&Value> =
        notifications.iter().filter(|n| n["method"] == "notifications/progress").map(|n| &n["params"]).collect();
    let values: Vec<(&Value, &Value, &Value)> =
        progress.iter().map(|p| (&p["progressToken"], &p["progress"], &p["total"])).collect();
    let (token, total) = (json!("p-1"), json!(100.0));
    assert_eq!(
        values,
        [(&token, &json!(0.0), &total), (&token, &json!(50.0), &total), (&token, &json!(100.0), &total)]
    );
    assert!(progress.iter().all(|p| p["message"].as_str().is_some_and(|m| m.starts_with("Completed step"))));

    // Numeric tokens are echoed as numbers; without a token, nothing is sent.
    let call = json!({"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": 7}});
    let (_, notifications) = client.request_noting("tools/call", call).await;
    assert!(notifications.iter().all(|n| n["params"]["progressToken"] == 7), "{notifications:?}");
    assert_eq!(notifications.len(), 3);
    let call = json!({"name": "test_tool_with_progress", "arguments": {}});
    let (_, notifications) = client.request_noting("tools/call", call).await;
    assert!(notifications.is_empty(), "{notifications:?}");
}

#[tokio::test]
async fn the_test_fixture_is_offered_only_where_it_was_asked_for() {
    let fixture_names = |listing: &Value, key: &str, field: &str| -> Vec<String> {
        listing[key]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|i| i[field].as_str())
            .filter(|n| n.starts_with("test_") || n.starts_with("test://") || n.starts_with("json_schema"))
            .map(String::from)
            .collect()
    };
    let listings = [
        ("tools/list", "tools", "name"),
        ("prompts/list", "prompts", "name"),
        ("resources/list", "resources", "uri"),
        ("resources/templates/list", "resourceTemplates", "uriTemplate"),
    ];
    for mode in [ToolMode::All, ToolMode::ReadOnly, ToolMode::Discover] {
        let mut client = Client::start(mode.clone()).await;
        for (method, key, field) in listings {
            let listing = client.result(method, json!({})).await;
            assert_eq!(fixture_names(&listing, key, field), Vec::<String>::new(), "{mode:?} {method}");
        }
        let refused = client.request("tools/call", json!({"name": "test_simple_text", "arguments": {}})).await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        let refused = client.request("resources/read", json!({"uri": "test://static-text"})).await;
        assert!(refused.get("error").is_some(), "{refused}");
        let refused = client.request("prompts/get", json!({"name": "test_simple_prompt"})).await;
        assert!(refused.get("error").is_some(), "{refused}");
    }

    let mut client = Client::with_fixture().await;
    assert!(client.init["capabilities"].get("logging").is_some(), "{}", client.init);
    assert_eq!(client.init["capabilities"]["resources"]["subscribe"], true, "{}", client.init);
    let tools = client.result("tools/list", json!({})).await;
    assert_eq!(fixture_names(&tools, "tools", "name").len(), 14);
    assert_eq!(tools["tools"].as_array().unwrap().len(), 68 + 14, "the site's tools stay");
    let text = client.result("tools/call", json!({"name": "test_simple_text"})).await;
    assert_eq!(text["content"][0]["text"], "This is a simple text response for testing.");
    let template = client.result("resources/read", json!({"uri": "test://template/42/data"})).await;
    assert!(template["contents"][0]["text"].as_str().unwrap().contains("\"id\":\"42\""), "{template}");
    client.result("resources/subscribe", json!({"uri": "test://watched-resource"})).await;
    let pages = client.request("resources/subscribe", json!({"uri": "quire://pages/about"})).await;
    assert_eq!(pages["error"]["code"], -32602, "{pages}");
    let (_, logged) =
        client.request_noting("tools/call", json!({"name": "test_tool_with_logging", "arguments": {}})).await;
    assert_eq!(logged.iter().filter(|n| n["method"] == "notifications/message").count(), 3, "{logged:?}");
}

#[tokio::test]
async fn structured_results_match_each_tools_output_schema() {
    let mut client = Client::start(ToolMode::All).await;
    let tools = client.result("tools/list", json!({})).await["tools"].as_array().unwrap().clone();
    assert_eq!(tools.len(), 68);
    let mut shapes = std::collections::BTreeSet::new();
    for tool in &tools {
        let name = tool["name"].as_str().unwrap();
        assert_eq!(&tool["outputSchema"], client.registry.output_schema(name).unwrap(), "{name}");
        assert!(!tool["inputSchema"].to_string().contains(r#"["string","null"]"#), "{name}");
        shapes.insert(tool["outputSchema"].to_string());
    }
    assert!(shapes.len() >= 15, "tools declare their own shapes, not one for all ({} distinct)", shapes.len());

    let calls = [
        ("getPage", json!({"slug": "home", "includeContent": true})),
        ("getPost", json!({"all": true})),
        ("getNavItem", json!({"navigationId": "header"})),
        ("createPage", json!({"name": "MCP", "slug": "mcp-page"})),
        ("searchNotes", json!({"query": "pricing"})),
        ("readNote", json!({"path": "Welcome.md", "startLine": 1})),
        ("getPage", json!({"slug": "missing"})),
        ("deleteNavItem", json!({"ids": ["nav_none"]})),
    ];
    for (name, args) in calls {
        let result = client.result("tools/call", json!({"name": name, "arguments": args})).await;
        let structured = &result["structuredContent"];
        let schema = client.registry.output_schema(name).unwrap();
        let problems = quire_tools::output::violations(schema, structured);
        assert!(problems.is_empty(), "{name}: {problems:?}\n{structured}");
        assert_eq!(result["isError"] == true, structured["success"] == false, "{name}: {result}");
    }
    let page = client.result("tools/call", json!({"name": "getPage", "arguments": {"slug": "mcp-page"}})).await;
    let id = page["structuredContent"]["items"][0]["id"].clone();
    let preview = client.result("tools/call", json!({"name": "deletePage", "arguments": {"ids": [id]}})).await;
    let structured = &preview["structuredContent"];
    assert_eq!(structured["requiresConfirmation"], true, "{preview}");
    assert!(
        quire_tools::output::violations(client.registry.output_schema("deletePage").unwrap(), structured).is_empty()
    );
}

#[tokio::test]
async fn resource_templates_read_pages_and_posts() {
    let mut client = Client::start(ToolMode::All).await;
    let templates = client.result("resources/templates/list", json!({})).await;
    let uris: Vec<&str> =
        templates["resourceTemplates"].as_array().unwrap().iter().filter_map(|t| t["uriTemplate"].as_str()).collect();
    assert_eq!(uris, ["quire://pages/{slug}", "quire://posts/{slug}"]);

    // every published page, not only those resources/list names, reads through the template
    let about = client.result("resources/read", json!({"uri": "quire://pages/about"})).await;
    let text = about["contents"][0]["text"].as_str().unwrap();
    assert!(text.contains("\"slug\": \"about\""), "{text}");
    let post = client.result("resources/read", json!({"uri": "quire://posts/hello-quire"})).await;
    assert!(post["contents"][0]["text"].as_str().unwrap().contains("hello-quire"));
    let draft = client.error("resources/read", json!({"uri": "quire://posts/roadmap-draft"})).await;
    assert!(draft.contains("no published post roadmap-draft"), "{draft}");
    let unknown = client.error("resources/read", json!({"uri": "quire://images/x"})).await;
    assert!(unknown.contains("use quire://pages/{slug} or quire://posts/{slug}"), "{unknown}");
    let empty = client.error("resources/read", json!({"uri": "quire://pages/"})).await;
    assert!(empty.contains("unknown resource"), "{empty}");
}

#[tokio::test]
async fn completion_offers_slugs_and_names_what_is_wrong() {
    let mut client = Client::start(ToolMode::All).await;
    let complete = |r: Value, name: &str, value: &str| json!({"ref": r, "argument": {"name": name, "value": value}});
    let pages = json!({"type": "ref/resource", "uri": "quire://pages/{slug}"});
    let all = client.result("completion/complete", complete(pages.clone(), "slug", "")).await;
    let slugs: Vec<&str> = all["completion"]["values"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(slugs.contains(&"home") && slugs.contains(&"about"), "{slugs:?}");
    assert_eq!(all["completion"]["hasMore"], false);
    let narrowed = client.result("completion/complete", complete(pages, "slug", "ab")).await;
    assert_eq!(narrowed["completion"]["values"], json!(["about"]));

    let posts = json!({"type": "ref/resource", "uri": "quire://posts/{slug}"});
    let hello = client.result("completion/complete", complete(posts.clone(), "slug", "hel")).await;
    assert_eq!(hello["completion"]["values"], json!(["hello-quire"]));
    let drafts = client.result("completion/complete", complete(posts, "slug", "roadmap")).await;
    assert_eq!(drafts["completion"]["values"], json!([]), "drafts are not resources");

    let prompt = json!({"type": "ref/prompt", "name": "replace-image-on-page"});
    let page = client.result("completion/complete", complete(prompt.clone(), "page", "pri")).await;
    assert_eq!(page["completion"]["values"], json!(["pricing"]));
    let free_text = client.result("completion/complete", complete(prompt.clone(), "image", "sun")).await;
    assert_eq!(free_text["completion"]["values"], json!([]));
    let blog = json!({"type": "ref/prompt", "name": "write-and-publish-post"});
    let collection = client.result("completion/complete", complete(blog, "collectionSlug", "")).await;
    assert_eq!(collection["completion"]["values"], json!(["blog"]));

    let bad_arg = client.error("completion/complete", complete(prompt, "colour", "")).await;
    assert!(bad_arg.contains("has no argument \"colour\" (accepted: page, image)"), "{bad_arg}");
    let bad_prompt =
        client.error("completion/complete", complete(json!({"type": "ref/prompt", "name": "nope"}), "x", "")).await;
    assert!(bad_prompt.contains("no prompt named \"nope\""), "{bad_prompt}");
    let bad_template = client
        .error("completion/complete", complete(json!({"type": "ref/resource", "uri": "quire://x/{id}"}), "id", ""))
        .await;
    assert!(bad_template.contains("no resource template quire://x/{id}"), "{bad_template}");
}

#[tokio::test]
async fn discover_mode_points_at_its_meta_tools() {
    let mut client = Client::start(ToolMode::Discover).await;
    assert!(client.init["instructions"].as_str().unwrap().contains("useTool"));
    let tools = client.result("tools/list", json!({})).await;
    let names: Vec<&str> = tools["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["searchTools", "useTool"]);
    let used = client
        .result(
            "tools/call",
            json!({"name": "useTool", "arguments": {"name": "getPage", "arguments": {"slug": "home"}}}),
        )
        .await;
    assert_eq!(used["structuredContent"]["items"][0]["slug"], "home");
}
