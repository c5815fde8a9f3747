//! Wiring: store, registry, controllers, TLS, kubeconfig, and the serve loop with graceful
//! shutdown.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, bail};
use porch_apiserver::{ApiServer, ServerConfig, WatchHub};

use crate::cli::Args;
use crate::git_opener::GitOpener;
use crate::{kubeconfig, pki, serviceaccounts, tls};
use porch_apiserver::auth::chain::BootstrapTokens;
use porch_apiserver::auth::oidc::{KeySource, Oidc, OidcConfig};
use porch_apiserver::auth::serviceaccount::ServiceAccountTokens;
use porch_apiserver::auth::token_file::TokenFile;
use porch_apiserver::auth::{Authenticator, TokenAuthenticator};
use porch_resources::opener::RepositoryOpener;
use porch_resources::{self as resources, controller};

fn hosts_for(addr: &SocketAddr) -> Vec<String> {
    let mut hosts = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
    ];
    let ip = addr.ip();
    if !ip.is_unspecified() && !hosts.contains(&ip.to_string()) {
        hosts.push(ip.to_string());
    }
    hosts
}

fn client_host(addr: &SocketAddr) -> String {
    match addr.ip() {
        ip if ip.is_unspecified() => format!("127.0.0.1:{}", addr.port()),
        std::net::IpAddr::V6(ip) => format!("[{ip}]:{}", addr.port()),
        ip => format!("{ip}:{}", addr.port()),
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}

/// Resolves the `secretRef` of a clone from a raw git URL from the Secrets this server holds.
fn upstream_credentials(
    secrets: Option<porch_apiserver::Resource>,
) -> porch_git::CredentialResolver {
    Arc::new(move |namespace: &str, name: &str| {
        let secrets = secrets
            .as_ref()
            .ok_or_else(|| "this server serves no secrets".to_string())?;
        let ctx = porch_apiserver::RequestContext::system("system:package-upstream");
        // The fetcher asks from async code but through a sync callback; the runtime is
        // multi-threaded, so this worker may block while another drives the read.
        let creds = tokio::task::block_in_place(|| {
            tokio::runtime::Handle::current().block_on(controller::secret_credentials(
                secrets, &ctx, namespace, name,
            ))
        })?;
        Ok(match creds {
            porch_resources::opener::Credentials::Basic { username, password } => {
                porch_git::GitAuth::Basic { username, password }
            }
            porch_resources::opener::Credentials::Bearer(token) => {
                porch_git::GitAuth::Bearer { token }
            }
        })
    })
}

/// The authenticator chain the flags describe: client certificates, the bootstrap admin
/// token, `--token-auth-file`, ServiceAccount tokens, OIDC ID tokens, then anonymous.
fn authenticator(
    args: &Args,
    admin_token: &str,
    sa_tokens: Arc<ServiceAccountTokens>,
) -> anyhow::Result<Authenticator> {
    let mut tokens: Vec<Arc<dyn TokenAuthenticator>> =
        vec![Arc::new(BootstrapTokens(vec![admin_token.to_string()]))];
    if let Some(path) = &args.token_auth_file {
        tokens.push(Arc::new(TokenFile::open(path)?));
    }
    tokens.push(sa_tokens);
    if let (Some(issuer), Some(client_id)) = (&args.oidc_issuer_url, &args.oidc_client_id) {
        let source: Arc<dyn KeySource> = match &args.oidc_jwks_file {
            Some(path) => Arc::new(crate::oidc::FileKeys(path.clone())),
            None => Arc::new(crate::oidc::DiscoveryKeys::new(
                issuer,
                args.oidc_ca_file.as_ref(),
            )?),
        };
        tokens.push(Arc::new(Oidc::new(
            OidcConfig {
                issuer_url: issuer.clone(),
                client_id: client_id.clone(),
                username_claim: args.oidc_username_claim.clone(),
                username_prefix: args.oidc_username_prefix.clone(),
                groups_claim: args.oidc_groups_claim.clone(),
                groups_prefix: args.oidc_groups_prefix.clone(),
            },
            source,
        )));
        tracing::info!(%issuer, "OIDC ID tokens accepted");
    }
    Ok(Authenticator {
        disabled: false,
        client_certificates: args.client_ca_file.is_some() || args.tls_cert_file.is_none(),
        tokens,
        anonymous: args.anonymous_auth,
    })
}

/// A clone's raw git upstream obeys `--allow-local-repositories` as Repositories do.
struct LocalGate<F>(F);

impl<F: porch_core::upstream::UpstreamFetcher> porch_core::upstream::UpstreamFetcher
    for LocalGate<F>
{
    fn fetch(
        &self,
        req: porch_core::upstream::UpstreamFetch,
    ) -> porch_core::repository::BoxFuture<
        '_,
        Result<porch_core::upstream::FetchedPackage, porch_core::repository::RepositoryError>,
    > {
        match resources::local_repos::problem(&req.repo) {
            Some(problem) => {
                Box::pin(
                    async move { Err(porch_core::repository::RepositoryError::Invalid(problem)) },
                )
            }
            None => self.0.fetch(req),
        }
    }
}

/// The audit log the flags ask for: both a policy and a path, or none.
fn audit_log(args: &Args) -> anyhow::Result<Option<Arc<porch_apiserver::audit::Auditor>>> {
    use porch_apiserver::audit::{Auditor, LogTarget, Policy};
    let (Some(policy_file), Some(path)) = (&args.audit_policy_file, &args.audit_log_path) else {
        if args.audit_policy_file.is_some() {
            tracing::warn!("--audit-policy-file without --audit-log-path: nothing is audited");
        }
        return Ok(None);
    };
    let text = std::fs::read_to_string(policy_file)
        .with_context(|| format!("cannot read the audit policy {}", policy_file.display()))?;
    let policy = Policy::parse(&text).with_context(|| policy_file.display().to_string())?;
    let target = LogTarget {
        path: path.clone(),
        max_bytes: (args.audit_log_maxsize.max(0.0) * 1024.0 * 1024.0) as u64,
        max_backups: args.audit_log_maxbackup,
    };
    tracing::info!(path = %path.display(), "auditing requests");
    Ok(Some(Auditor::start(policy, target)?))
}

/// With `--function-runner`, the runner evaluates every function image (built-ins included, as
/// Porch's server sends everything to its runner); `exec:` steps still run here.
fn function_runner(args: &Args) -> anyhow::Result<Option<Arc<dyn kpt::runtime::FunctionRuntime>>> {
    let Some(address) = &args.function_runner else {
        return Ok(None);
    };
    let remote = porch_fn_proto::RemoteRuntime::connect(address, args.max_request_body_size)?;
    tracing::info!(runner = %address, "function images are evaluated by the function runner");
    Ok(Some(Arc::new(remote)))
}

/// The runtime for function images, its cache under the data directory unless configured.
fn container_runtime(args: &Args) -> anyhow::Result<fn_container::ContainerRuntime> {
    let cache = args
        .function_cache_dir
        .clone()
        .unwrap_or_else(|| args.data_dir.join("function-images"));
    let mut options = fn_container::ContainerOptions::new(&cache);
    options.max_cache_bytes = args.function_cache_max_mb.saturating_mul(1 << 20);
    options.insecure_registries = args.insecure_registries.clone();
    options.allow_network = args.allow_function_network;
    options.memory_limit =
        (args.function_memory_mb > 0).then(|| args.function_memory_mb.saturating_mul(1 << 20));
    fn_container::ContainerRuntime::new(options)
        .with_context(|| format!("cannot open the function image cache {}", cache.display()))
}

/// Runs the server until SIGTERM/SIGINT.
pub async fn run(args: Args) -> anyhow::Result<()> {
    if args.insecure_http && !args.listen.ip().is_loopback() {
        bail!(
            "--insecure-http is only allowed on a loopback address (got {}); use HTTPS",
            args.listen
        );
    }
    std::fs::create_dir_all(&args.data_dir).with_context(|| {
        format!(
            "cannot create the data directory {}",
            args.data_dir.display()
        )
    })?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&args.data_dir, std::fs::Permissions::from_mode(0o700))?;
    }

    // Local git URLs only under the directories the operator named (none by default).
    resources::local_repos::restrict_to(args.allow_local_repositories.clone());
    let opened = crate::store::open(&args).await?;
    let store = opened.store.clone();
    let hub = WatchHub::attach(&store, 4096);
    // Images no built-in provides are pulled and run sandboxed (built-ins win for theirs),
    // unless a FunctionConfig chooses another executor for the image.
    let function_configs = resources::functions::FunctionConfigs::default();
    let runner = function_runner(&args)?;
    // A FunctionConfig's pull Secrets reach the in-process sandbox only: Porch's gRPC request
    // has no field for them, so a function runner pulls with its own docker config.
    let pull_secrets = Arc::new(std::sync::OnceLock::new());
    let sandbox = match &runner {
        Some(_) => None,
        None => Some(Arc::new(container_runtime(&args)?)),
    };
    let executors = resources::functions::Executors {
        builtins: match &runner {
            Some(remote) => remote.clone(),
            None => Arc::new(krm_functions::Builtins),
        },
        exec: Arc::new(if args.allow_exec_functions {
            kpt::runtime::exec::ExecRuntime::allowed()
        } else {
            kpt::runtime::exec::ExecRuntime::denied()
        }),
        binary: Arc::new(kpt::runtime::exec::ExecRuntime::allowed()),
        images: match (runner, &sandbox) {
            (Some(remote), _) => Some(remote),
            (None, Some(sandbox)) => {
                Some(sandbox.clone() as Arc<dyn kpt::runtime::FunctionRuntime>)
            }
            (None, None) => None,
        },
        configured_images: sandbox.map(|s| {
            Arc::new(crate::function_images::SandboxImages(s))
                as Arc<dyn resources::functions::ConfiguredImages>
        }),
        pull_secrets: Some(crate::function_images::secret_source(pull_secrets.clone())),
        functions_dir: args
            .functions_dir
            .clone()
            .unwrap_or_else(|| args.data_dir.join("functions")),
    };
    let runtime: Arc<dyn kpt::runtime::FunctionRuntime> = Arc::new(
        resources::functions::ConfiguredRuntime::new(executors, function_configs.clone()),
    );
    let engine = porch_engine::Engine::with_options(
        store.clone(),
        runtime,
        porch_engine::EngineOptions {
            push_drafts_to_git: args.push_drafts_to_git,
            render: args.render_limits(),
        },
    );
    // On PostgreSQL: repository leases, the event-log follower (whose progress the read
    // barrier waits for) and the leader election (controllers, Repository status).
    let mut cluster = None;
    let mut follower = None;
    if let Some(pg) = &opened.postgres {
        let (applied_tx, applied_rx) = tokio::sync::watch::channel(crate::cluster::Applied {
            applied: hub.latest(),
            // The start-up Repositories: the barrier waits for their first open.
            repositories: 0,
        });
        let probe = Arc::new(pg.rv_probe());
        engine.set_cluster(Arc::new(crate::cluster::PgLeases {
            pg: pg.clone(),
            probe: probe.clone(),
            applied: applied_rx.clone(),
        }));
        // Subscribed now, started once the CRDs are known: no event is missed.
        let follow_rx = hub.subscribe();
        let election = porch_store_postgres::LeaderElection::start(
            pg.connection_config().clone(),
            "controllers",
            Duration::from_millis(500),
        );
        cluster = Some((probe, applied_rx, election));
        follower = Some((follow_rx, applied_tx, pg.local_writes()));
        tracing::info!("running as a replica on PostgreSQL");
    }
    if args.push_drafts_to_git {
        tracing::info!("drafts and proposed revisions are mirrored to git branches");
    }
    // Events of the server's own components: recorded without waiting, written by one task.
    let instance = std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| resources::events::COMPONENT.to_owned());
    let (recorder, event_writer) =
        resources::events::EventRecorder::new(resources::events::COMPONENT, &instance, 1024);
    // What is served: the built-in kinds plus those of CustomResourceDefinitions.
    let live = porch_apiserver::LiveRegistry::default();
    let (registry, crds) =
        resources::registry_with_events(&store, &hub, &engine, &live, recorder.clone());
    resources::functions::serve(
        &live,
        function_configs.clone(),
        Some(Arc::new(crate::function_catalog::RegistryCatalog::new(
            &args,
        ))),
    );
    let served = crds.restore().await.map_err(|e| anyhow::anyhow!("{e}"))?;
    if let Some((rx, applied, local)) = follower {
        tokio::spawn(crate::cluster::follow(
            engine.clone(),
            hub.clone(),
            rx,
            crds.clone(),
            applied,
            local,
        ));
    }
    if served > 0 {
        tracing::info!(crds = served, "serving the custom resources of stored CRDs");
    }
    if let Some(events) = registry.find("", "v1", "events") {
        tokio::spawn(event_writer.run(events.backend.clone()));
        tokio::spawn(resources::events::prune_loop(
            events.backend.clone(),
            args.event_ttl,
        ));
    }
    if let Some(secrets) = registry.find("", "v1", "secrets") {
        let _ = pull_secrets.set(secrets.clone());
    }
    engine.set_upstream_fetcher(Arc::new(LocalGate(
        porch_git::GitUpstreamFetcher::new(args.data_dir.join("upstream"))
            .with_timeout(args.git_timeout)
            .with_credentials(upstream_credentials(
                registry.find("", "v1", "secrets").cloned(),
            )),
    )));
    // ServiceAccounts and their tokens (signed by the server's own key).
    let (sa_private, sa_public) = pki::service_account_key(&args.data_dir)?;
    let sa_tokens = serviceaccounts::register(&live, &store, &hub, |lookup| {
        Ok(ServiceAccountTokens::new(
            &args.service_account_issuer,
            args.api_audiences.clone(),
            sa_private.as_bytes(),
            sa_public.as_bytes(),
            lookup,
        )?)
    })?;
    resources::ensure_default_namespaces(&registry)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    // RBAC: the default policy, the authorizer following the store, and the aggregation of
    // ClusterRoles.
    porch_apiserver::authz::ensure_defaults(&registry, resources::default_policy())
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    tokio::spawn(porch_apiserver::authz::run_aggregation(
        live.clone(),
        hub.clone(),
    ));
    let authorizer = if args.authorization_mode == "RBAC" {
        let a = porch_apiserver::authz::Authorizer::new(store.clone(), hub.clone())?;
        a.start();
        Some(a)
    } else {
        None
    };

    let token = pki::admin_token(&args.data_dir)?;
    // kubectl never sends a bearer token over plain HTTP, so the loopback-only insecure mode
    // runs without authentication.
    let authentication = if args.insecure_http {
        Authenticator::disabled()
    } else {
        authenticator(&args, &token, sa_tokens)?
    };
    let audit = audit_log(&args)?;
    let config = ServerConfig {
        max_body_bytes: args.max_request_body_size,
        authorizer: authorizer.clone(),
        authentication: Some(authentication),
        audit: audit.clone(),
        ..ServerConfig::default()
    };
    let gauge_hub = hub.clone();
    let gauge_recorder = recorder.clone();
    let gauges: porch_apiserver::GaugeFn = Arc::new(move || {
        vec![
            (
                "porch_apiserver_watchers",
                "Open watch subscriptions.",
                gauge_hub.watchers() as f64,
            ),
            (
                "porch_store_resource_version",
                "Last committed resourceVersion.",
                gauge_hub.latest() as f64,
            ),
            (
                "porch_events_dropped",
                "Events dropped because the event queue was full.",
                gauge_recorder.dropped() as f64,
            ),
            (
                "porch_audit_events_dropped",
                "Audit events dropped because the audit log writer fell behind.",
                audit.as_ref().map_or(0, |a| a.dropped()) as f64,
            ),
        ]
    });
    let api = ApiServer::with_gauges(live.clone(), config, gauges);
    let mut app = api.router();

    // Controllers. `ready` turns true once every start-up Repository is loaded; `stop` on
    // shutdown.
    let (ready_tx, ready_rx) = tokio::sync::watch::channel(false);
    // Ready = the start-up repositories are loaded and the store answers (PostgreSQL).
    let loaded = Arc::new(AtomicBool::new(true));
    let store_ok = Arc::new(AtomicBool::new(true));
    let set_ready: Arc<dyn Fn() + Send + Sync> = {
        let (api, loaded, store_ok) = (api.clone(), loaded.clone(), store_ok.clone());
        Arc::new(move || {
            let ready = loaded.load(Ordering::SeqCst) && store_ok.load(Ordering::SeqCst);
            api.ready.store(ready, Ordering::SeqCst);
        })
    };
    if let Some(pg) = opened.postgres.clone() {
        let set_ready = set_ready.clone();
        tokio::spawn(crate::store::probe(pg, store_ok.clone(), move || {
            set_ready()
        }));
    }
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut gate_progress = None;
    tokio::spawn(resources::gc::run(live.clone(), store.clone(), hub.clone()));
    if let Some(repos) = registry
        .find(porch_api::CONFIG_GROUP, "v1alpha1", "repositories")
        .cloned()
    {
        let secrets = registry.find("", "v1", "secrets").cloned();
        let mut git_opener = GitOpener::new(&args.data_dir, engine.clone(), args.git_timeout);
        if let Some((_, _, election)) = &cluster {
            git_opener = git_opener.with_leader(election.leading());
        }
        let opener: Arc<dyn RepositoryOpener> = Arc::new(git_opener);
        // Not ready until every Repository there at start-up is loaded (controller.rs).
        loaded.store(false, Ordering::SeqCst);
        set_ready();
        let set_ready = set_ready.clone();
        let loaded = loaded.clone();
        let gate = controller::StartupGate::new(move || {
            loaded.store(true, Ordering::SeqCst);
            set_ready();
            let _ = ready_tx.send(true);
        });
        gate_progress = Some(gate.progress());
        tokio::spawn(controller::run(
            repos,
            secrets,
            opener,
            gate,
            recorder.clone(),
        ));
    } else {
        let _ = ready_tx.send(true);
    }
    tokio::spawn(resources::functions::apply::run(
        live.clone(),
        function_configs,
        stop_rx.clone(),
    ));
    let start_controllers = {
        let (live, engine, recorder, hub, authorizer) = (
            live.clone(),
            engine.clone(),
            recorder.clone(),
            hub.clone(),
            authorizer.clone(),
        );
        move |ready: tokio::sync::watch::Receiver<bool>,
              stop: tokio::sync::watch::Receiver<bool>| {
            let variants = resources::packagevariants::run(
                live.clone(),
                engine.clone(),
                hub.clone(),
                Arc::new(resources::packagevariants::ControllerEvents(
                    recorder.clone(),
                )),
                authorizer.clone(),
                ready.clone(),
                stop.clone(),
            );
            let sets = resources::packagevariantsets::run(
                live.clone(),
                engine.clone(),
                hub.clone(),
                ready,
                stop,
            );
            async move {
                tokio::join!(variants, sets);
            }
        }
    };
    // On PostgreSQL the fan-out controllers run on the elected leader only.
    let controllers = match cluster {
        Some((probe, applied, election)) => {
            let barrier =
                crate::cluster::ReadBarrier::new(probe, applied, gate_progress, authorizer.clone());
            let b = barrier.clone();
            engine.set_read_barrier(Arc::new(move || {
                let b = b.clone();
                Box::pin(async move { b.wait().await })
            }));
            app = app.layer(axum::middleware::from_fn_with_state(
                barrier,
                crate::cluster::barrier_layer,
            ));
            let ready = ready_rx.clone();
            tokio::spawn(crate::cluster::while_leading(
                election,
                ready_rx,
                stop_rx,
                move |stop| start_controllers(ready.clone(), stop),
            ))
        }
        None => tokio::spawn(start_controllers(ready_rx, stop_rx)),
    };

    let listener = std::net::TcpListener::bind(args.listen).with_context(|| {
        format!(
            "cannot listen on {} (is another server running? pick another --listen)",
            args.listen
        )
    })?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let kubeconfig_path = args
        .kubeconfig_out
        .clone()
        .unwrap_or_else(|| args.data_dir.join("kubeconfig"));

    let handle = axum_server::Handle::new();
    let grace = Duration::from_secs(args.shutdown_grace_seconds);
    {
        let handle = handle.clone();
        let engine = engine.clone();
        tokio::spawn(async move {
            shutdown_signal().await;
            tracing::info!("shutting down");
            // Controllers take no new work; a reconcile in flight is cut short with the
            // process (the next start finds its drafts by ownerReference).
            let _ = stop_tx.send(true);
            // Renders stop at their next budget check; their requests answer with the error.
            engine.cancel_renders();
            handle.graceful_shutdown(Some(grace));
        });
    }
    let service = app.into_make_service_with_connect_info::<SocketAddr>();
    if args.insecure_http {
        let server_url = format!("http://{}", client_host(&addr));
        pki::write_private(
            &kubeconfig_path,
            kubeconfig::render(&server_url, None, None)?.as_bytes(),
        )?;
        tracing::info!(url = %server_url, kubeconfig = %kubeconfig_path.display(), "serving plain HTTP (loopback only)");
        // TCP_NODELAY: small watch events must not wait for Nagle's algorithm.
        axum_server::from_tcp(listener)?
            .acceptor(axum_server::accept::NoDelayAcceptor::new())
            .handle(handle)
            .serve(service)
            .await?;
    } else {
        let tls = match (&args.tls_cert_file, &args.tls_key_file) {
            (Some(c), Some(k)) => pki::given_tls(c, k, args.tls_ca_file.as_ref())?,
            _ => pki::local_tls(&args.data_dir, &hosts_for(&addr))?,
        };
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client_ca = match &args.client_ca_file {
            Some(p) => Some(
                std::fs::read_to_string(p)
                    .with_context(|| format!("cannot read {}", p.display()))?,
            ),
            // The local CA signs the certificates of `porch-server users add`.
            None if args.tls_cert_file.is_none() => tls.ca_pem.clone(),
            None => None,
        };
        let rustls_config = tls::server_config(&tls.cert_pem, &tls.key_pem, client_ca.as_deref())?;
        let server_url = format!("https://{}", client_host(&addr));
        pki::write_private(
            &kubeconfig_path,
            kubeconfig::render(&server_url, tls.ca_pem.as_deref(), Some(&token))?.as_bytes(),
        )?;
        tracing::info!(url = %server_url, kubeconfig = %kubeconfig_path.display(), "serving HTTPS");
        let acceptor = tls::ClientCertAcceptor::new(rustls_config);
        axum_server::from_tcp(listener)?
            .acceptor(acceptor)
            .handle(handle)
            .serve(service)
            .await?;
    }
    let _ = tokio::time::timeout(Duration::from_secs(4), controllers).await;
    tracing::info!("stopped");
    Ok(())
}
