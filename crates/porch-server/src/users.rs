//! `porch-server users add <name> --group <g>...`: a client certificate from the server's local
//! CA (CN = name, O = groups) and a kubeconfig for that user.

use std::path::PathBuf;

use anyhow::{Context, bail};

use crate::cli::{Args, UsersCommand};
use crate::{kubeconfig, pki};

pub fn run(args: &Args, cmd: &UsersCommand) -> anyhow::Result<()> {
    match cmd {
        UsersCommand::Add {
            name,
            groups,
            days,
            out,
        } => add(args, name, groups, *days, out.clone()),
    }
}

fn add(
    args: &Args,
    name: &str,
    groups: &[String],
    days: u32,
    out: Option<PathBuf>,
) -> anyhow::Result<()> {
    if name.trim().is_empty() || name.contains(['/', '\\']) {
        bail!("invalid user name {name:?}");
    }
    if days == 0 {
        bail!("--days must be at least 1");
    }
    let admin = args
        .kubeconfig_out
        .clone()
        .unwrap_or_else(|| args.data_dir.join("kubeconfig"));
    let text = std::fs::read_to_string(&admin).with_context(|| {
        format!(
            "cannot read {} (start the server once so that it writes it)",
            admin.display()
        )
    })?;
    let (server, ca) = kubeconfig::server_of(&text)?;
    if !server.starts_with("https://") {
        bail!("client certificates need the HTTPS listener (the server runs with --insecure-http)");
    }
    let now = time::OffsetDateTime::now_utc();
    let cert = pki::issue_client_cert(
        &args.data_dir,
        name,
        groups,
        now - time::Duration::minutes(5),
        now + time::Duration::days(i64::from(days)),
    )?;
    let out = out.unwrap_or_else(|| {
        args.data_dir
            .join("users")
            .join(format!("{name}.kubeconfig"))
    });
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let config = kubeconfig::render_client_cert(
        &server,
        ca.as_deref(),
        name,
        &cert.cert_pem,
        &cert.key_pem,
    )?;
    pki::write_private(&out, config.as_bytes())?;
    println!("{}", out.display());
    Ok(())
}
