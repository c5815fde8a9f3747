//! The parts of an OCI image config a function run needs.

use std::path::Path;

use serde::Deserialize;

use crate::ContainerError;
use crate::unpack::resolve_in;

/// Docker's PATH when an image sets none.
const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

#[derive(Debug, Clone, Default, Deserialize)]
struct ConfigFile {
    #[serde(default)]
    config: Option<RunConfig>,
}

/// Entrypoint, command, environment, working directory and user of an image.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "PascalCase")]
pub struct RunConfig {
    /// The program and its leading arguments.
    #[serde(default)]
    pub entrypoint: Option<Vec<String>>,
    /// Arguments after the entrypoint (or the program, without one).
    #[serde(default)]
    pub cmd: Option<Vec<String>>,
    /// `KEY=value` pairs.
    #[serde(default)]
    pub env: Option<Vec<String>>,
    /// Where the function starts.
    #[serde(default)]
    pub working_dir: Option<String>,
    /// `uid[:gid]` or a user name from the image's /etc/passwd.
    #[serde(default)]
    pub user: Option<String>,
}

impl RunConfig {
    /// Parses an image config blob.
    pub fn from_json(text: &str) -> Result<Self, ContainerError> {
        let file: ConfigFile =
            serde_json::from_str(text).map_err(|e| ContainerError::Config(e.to_string()))?;
        Ok(file.config.unwrap_or_default())
    }

    /// Entrypoint followed by cmd.
    pub fn argv(&self) -> Vec<String> {
        let mut argv = self.entrypoint.clone().unwrap_or_default();
        argv.extend(self.cmd.clone().unwrap_or_default());
        argv
    }

    /// The image's environment, with docker's default PATH when it sets none.
    pub fn env(&self) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = self
            .env
            .iter()
            .flatten()
            .map(|kv| match kv.split_once('=') {
                Some((k, v)) => (k.to_string(), v.to_string()),
                None => (kv.clone(), String::new()),
            })
            .collect();
        if !env.iter().any(|(k, _)| k == "PATH") {
            env.push(("PATH".into(), DEFAULT_PATH.into()));
        }
        env
    }

    /// The working directory (default `/`).
    pub fn working_dir(&self) -> &str {
        match self.working_dir.as_deref() {
            Some(d) if !d.is_empty() => d,
            _ => "/",
        }
    }

    /// Numeric uid and gid of the image's user, names looked up in the rootfs.
    pub fn ids(&self, rootfs: &Path) -> Result<(u32, u32), ContainerError> {
        let user = self.user.as_deref().unwrap_or("").trim();
        if user.is_empty() {
            return Ok((0, 0));
        }
        let (u, g) = match user.split_once(':') {
            Some((u, g)) => (u, Some(g)),
            None => (user, None),
        };
        let passwd = table(rootfs, "passwd")?;
        // name:x:uid:gid:...
        let line = passwd.iter().find(|f| {
            f.first().map(String::as_str) == Some(u) || f.get(2).map(String::as_str) == Some(u)
        });
        let uid = match u.parse::<u32>() {
            Ok(uid) => uid,
            Err(_) => line
                .and_then(|f| f.get(2))
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| {
                    ContainerError::Config(format!("user {u:?} is not in the image's /etc/passwd"))
                })?,
        };
        let primary = line
            .and_then(|f| f.get(3))
            .and_then(|v| v.parse().ok())
            .unwrap_or(uid);
        let gid = match g {
            None => primary,
            Some(g) => match g.parse::<u32>() {
                Ok(gid) => gid,
                Err(_) => table(rootfs, "group")?
                    .iter()
                    .find(|f| f.first().map(String::as_str) == Some(g))
                    .and_then(|f| f.get(2))
                    .and_then(|v| v.parse().ok())
                    .ok_or_else(|| {
                        ContainerError::Config(format!(
                            "group {g:?} is not in the image's /etc/group"
                        ))
                    })?,
            },
        };
        Ok((uid, gid))
    }
}

/// The lines of the image's /etc/passwd or /etc/group, split in fields (empty if absent).
fn table(rootfs: &Path, name: &str) -> Result<Vec<Vec<String>>, ContainerError> {
    let path = resolve_in(rootfs, &["etc".to_string(), name.to_string()])?;
    let text = std::fs::read_to_string(path).unwrap_or_default();
    Ok(text
        .lines()
        .map(|l| l.split(':').map(String::from).collect())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_run_config_and_users() {
        let c = RunConfig::from_json(
            r#"{"architecture":"amd64","config":{"Entrypoint":["/fn"],"Cmd":["-v"],
            "Env":["A=1"],"WorkingDir":"/work","User":"nonroot"}}"#,
        )
        .expect("parsed");
        assert_eq!(c.argv(), vec!["/fn", "-v"]);
        assert!(c.env().contains(&("A".into(), "1".into())));
        assert!(c.env().iter().any(|(k, _)| k == "PATH"));
        assert_eq!(c.working_dir(), "/work");
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(c.ids(dir.path()).is_err());
        std::fs::create_dir(dir.path().join("etc")).expect("mkdir");
        std::fs::write(
            dir.path().join("etc/passwd"),
            "root:x:0:0::/root:/bin/sh\nnonroot:x:65532:65533::/home:/sbin/nologin\n",
        )
        .expect("write");
        assert_eq!(c.ids(dir.path()).expect("ids"), (65532, 65533));
        let numeric = RunConfig {
            user: Some("1000:2000".into()),
            ..RunConfig::default()
        };
        assert_eq!(numeric.ids(dir.path()).expect("ids"), (1000, 2000));
        assert_eq!(RunConfig::default().ids(dir.path()).expect("ids"), (0, 0));
    }
}
