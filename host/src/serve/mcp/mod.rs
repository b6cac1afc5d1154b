//! The Model Context Protocol server (docs/agents.md), on the official SDK (`rmcp`): `palisade
//! mcp` over stdio for a local agent, and streamable HTTP at `/mcp` on `palisade serve`.
//!
//! It is one more way into the same services as the HTTP API: every tool builds the request
//! the matching route takes and hands it to the same function with the caller's tenant (a run
//! to [`runs::run_named`](super::runs::run_named), a session's to [`Sessions`](super::sessions),
//! an app's to [`Apps`](super::apps)), so every call goes through the [`Runner`](super::runner)
//! with the policy's limits, audit and refusals. Nothing a client sends names a limit the
//! policy does not allow, and a tenant sees only its policies, sessions and apps. Over HTTP the
//! tenant comes from each request's key (as for every other route: `Authorization: Bearer`,
//! the key's rate); over stdio it is the keyless server's `local` tenant. Over HTTP the server
//! is stateless (no MCP session is kept between requests).
//!
//! `tools.rs` lists and runs the tools (their descriptions carry each policy's TypeScript
//! declarations, `Policy::typescript_grants`); `reply.rs` turns answers into MCP content;
//! resources are the tenant's policies, resolved, and their declarations.

mod reply;
mod tools;

use super::auth::Tenant;
use super::state::AppState;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, InitializeResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, ServerCapabilities,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use std::sync::Arc;

/// The MCP server over the services of one [`AppState`].
#[derive(Clone)]
pub struct Mcp {
    state: Arc<AppState>,
    /// Over stdio, the one tenant; over HTTP, `None`: each request's own.
    tenant: Option<Arc<Tenant>>,
}

impl Mcp {
    /// Serve MCP over stdin and stdout as the local tenant until the client closes them.
    pub async fn stdio(state: Arc<AppState>) -> Result<(), String> {
        use rmcp::ServiceExt;
        let server = Mcp {
            state,
            tenant: Some(Arc::new(Tenant::local())),
        };
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| format!("the MCP client did not initialize: {e}"))?;
        running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| format!("the MCP server stopped: {e}"))
    }

    /// The tenant of a request: over HTTP, the one the `/mcp` route's key check put in the
    /// request's extensions.
    fn tenant(&self, context: &RequestContext<RoleServer>) -> Result<Arc<Tenant>, McpError> {
        if let Some(tenant) = &self.tenant {
            return Ok(tenant.clone());
        }
        context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Arc<Tenant>>())
            .cloned()
            .ok_or_else(|| McpError::invalid_request("no tenant: send a key", None))
    }
}

/// The `policy` argument of a `tools/call` request over HTTP, as its bytes were sent, when it
/// is a JSON object: an inline policy is named by the SHA-256 of its text, so a tool resolves
/// these bytes (as `POST /v1/run` does its body's) rather than the argument as parsed, whose
/// keys serde_json sorts. Put in the request's extensions by the `/mcp` route
/// ([`SentPolicy::read`]); over stdio there is none, and the parsed argument is written out.
#[derive(Debug, Clone)]
pub struct SentPolicy(pub Arc<str>);

impl SentPolicy {
    /// The `params.arguments.policy` of a JSON-RPC `body`, when it is an object and each of
    /// those keys appears once (as the transport, reading the same body, then finds it).
    pub fn read(body: &[u8]) -> Option<SentPolicy> {
        use serde::Deserialize;
        use serde_json::value::RawValue;
        #[derive(Deserialize)]
        struct Call<'a> {
            #[serde(borrow)]
            params: Option<Params<'a>>,
        }
        #[derive(Deserialize)]
        struct Params<'a> {
            #[serde(borrow)]
            arguments: Option<Arguments<'a>>,
        }
        #[derive(Deserialize)]
        struct Arguments<'a> {
            #[serde(borrow)]
            policy: Option<&'a RawValue>,
        }
        let call: Call = serde_json::from_slice(body).ok()?;
        let policy = call.params?.arguments?.policy?.get();
        policy.starts_with('{').then(|| SentPolicy(policy.into()))
    }
}

/// `/mcp`: the streamable HTTP transport, each request's tenant checked by its key first.
pub fn http_service(
    state: Arc<AppState>,
) -> rmcp::transport::StreamableHttpService<
    Mcp,
    rmcp::transport::streamable_http_server::session::local::LocalSessionManager,
> {
    let config = rmcp::transport::StreamableHttpServerConfig::default()
        // The server's own checks decide who may call (keys, and no keyless server off
        // loopback); any `Host` may name it.
        .disable_allowed_hosts()
        // Stateless: every request is answered on its own, with its own key's tenant; the
        // server keeps no MCP session between requests, so there is none to bound or expire.
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_max_request_body_bytes(super::router::MAX_BODY_BYTES);
    rmcp::transport::StreamableHttpService::new(
        move || {
            Ok(Mcp {
                state: state.clone(),
                tenant: None,
            })
        },
        Default::default(),
        config,
    )
}

impl ServerHandler for Mcp {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("palisade", env!("CARGO_PKG_VERSION")))
        .with_instructions(tools::INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let tenant = self.tenant(&context)?;
        let catalog = self.state.policies.current();
        Ok(ListToolsResult::with_all_items(tools::list(
            &catalog, &tenant,
        )))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let tenant = self.tenant(&context)?;
        let arguments = request.arguments.unwrap_or_default();
        let sent = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<SentPolicy>());
        let result = tools::call(&self.state, &tenant, &request.name, arguments, sent).await?;
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let tenant = self.tenant(&context)?;
        let catalog = self.state.policies.current();
        let mut resources = Vec::new();
        for policy in catalog
            .policies
            .values()
            .filter(|p| tenant.may_use(p.name()))
        {
            let name = policy.name();
            let about = policy.description().unwrap_or("a policy");
            resources.push(
                Resource::new(format!("palisade://policies/{name}"), name)
                    .with_description(format!("{about}: resolved, every default filled in"))
                    .with_mime_type("application/toml"),
            );
            resources.push(
                Resource::new(
                    format!("palisade://policies/{name}/types"),
                    format!("{name}.d.ts"),
                )
                .with_description(format!(
                    "What a script may use under `{name}`, as TypeScript declarations"
                ))
                .with_mime_type("application/typescript"),
            );
        }
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let tenant = self.tenant(&context)?;
        let not_found = || {
            McpError::resource_not_found(
                format!("no resource {}: resources/list names them", request.uri),
                None,
            )
        };
        let rest = request
            .uri
            .strip_prefix("palisade://policies/")
            .ok_or_else(not_found)?;
        let (name, types) = match rest.strip_suffix("/types") {
            Some(name) => (name, true),
            None => (rest, false),
        };
        let policy = self
            .state
            .policies
            .policy_for(&tenant, name)
            .map_err(|_| not_found())?;
        let (text, mime) = if types {
            (policy.typescript(), "application/typescript")
        } else {
            (policy.to_string(), "application/toml")
        };
        let contents = ResourceContents::TextResourceContents {
            uri: request.uri.clone(),
            mime_type: Some(mime.to_owned()),
            text,
            meta: None,
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}
