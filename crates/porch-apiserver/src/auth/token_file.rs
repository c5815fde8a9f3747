//! `--token-auth-file`: static bearer tokens in kube-apiserver's CSV format
//! (`token,user,uid,"group1,group2"`), re-read when the file changes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::RwLock;
use std::time::{Duration, Instant, SystemTime};

use super::UserInfo;
use super::chain::{AuthError, TokenAuthenticator};

/// How often the file's modification time is looked at, at most.
const RECHECK: Duration = Duration::from_secs(1);

/// A token file could not be read or parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenFileError {
    #[error("cannot read the token file {path}: {message}")]
    Read { path: String, message: String },
    #[error("token file {path}, line {line}: {message}")]
    Parse {
        path: String,
        line: usize,
        message: String,
    },
}

struct Loaded {
    users: HashMap<String, UserInfo>,
    modified: Option<SystemTime>,
    checked: Instant,
}

/// The tokens of a token file.
pub struct TokenFile {
    path: PathBuf,
    state: RwLock<Loaded>,
}

impl TokenFile {
    /// Reads `path`; a file that cannot be read or parsed fails the start-up.
    pub fn open(path: &Path) -> Result<Self, TokenFileError> {
        let (users, modified) = load(path)?;
        Ok(Self {
            path: path.to_path_buf(),
            state: RwLock::new(Loaded {
                users,
                modified,
                checked: Instant::now(),
            }),
        })
    }

    /// Re-reads the file when its modification time changed; a broken new version keeps the
    /// old tokens (and is logged), so an editor's half-written save locks nobody out.
    fn refresh(&self) {
        {
            let s = self.state.read().unwrap_or_else(|e| e.into_inner());
            if s.checked.elapsed() < RECHECK {
                return;
            }
        }
        let modified = std::fs::metadata(&self.path)
            .and_then(|m| m.modified())
            .ok();
        let mut s = self.state.write().unwrap_or_else(|e| e.into_inner());
        s.checked = Instant::now();
        if modified == s.modified {
            return;
        }
        match load(&self.path) {
            Ok((users, modified)) => {
                tracing::info!(path = %self.path.display(), tokens = users.len(), "token file re-read");
                s.users = users;
                s.modified = modified;
            }
            Err(e) => {
                tracing::warn!("{e}; keeping the previous tokens");
                s.modified = modified;
            }
        }
    }
}

#[async_trait::async_trait]
impl TokenAuthenticator for TokenFile {
    fn name(&self) -> &'static str {
        "token-file"
    }
    async fn authenticate_token(&self, token: &str) -> Result<Option<UserInfo>, AuthError> {
        self.refresh();
        let s = self.state.read().unwrap_or_else(|e| e.into_inner());
        Ok(s.users.get(token).cloned())
    }
}

fn load(path: &Path) -> Result<(HashMap<String, UserInfo>, Option<SystemTime>), TokenFileError> {
    let read_err = |e: std::io::Error| TokenFileError::Read {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let modified = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .map_err(read_err)?;
    let text = std::fs::read_to_string(path).map_err(read_err)?;
    let users = parse(&text).map_err(|(line, message)| TokenFileError::Parse {
        path: path.display().to_string(),
        line,
        message,
    })?;
    Ok((users, Some(modified)))
}

/// Parses the CSV text: at least token, user, uid; an optional fourth column of
/// comma-separated groups. Blank lines and `#` comments are skipped.
pub fn parse(text: &str) -> Result<HashMap<String, UserInfo>, (usize, String)> {
    let mut users = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let record = csv_fields(line).map_err(|m| (n, m))?;
        if record.len() < 3 {
            return Err((n, "expected at least 3 columns: token,user,uid".into()));
        }
        let token = record[0].trim().to_string();
        let name = record[1].trim();
        if token.is_empty() || name.is_empty() {
            return Err((n, "the token and the user must not be empty".into()));
        }
        let groups = record
            .get(3)
            .map(|g| {
                g.split(',')
                    .map(str::trim)
                    .filter(|g| !g.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        if users.contains_key(&token) {
            return Err((n, "duplicate token".into()));
        }
        users.insert(
            token,
            UserInfo::authenticated(name, record[2].trim(), groups),
        );
    }
    Ok(users)
}

/// One CSV record: fields separated by commas, a field in double quotes may hold commas and
/// `""` for a quote.
fn csv_fields(line: &str) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        let mut field = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    Some('"') => break,
                    Some(c) => field.push(c),
                    None => return Err("unterminated quoted field".into()),
                }
            }
            match chars.next() {
                None => {
                    fields.push(field);
                    return Ok(fields);
                }
                Some(',') => {}
                Some(_) => return Err("text after a quoted field".into()),
            }
        } else {
            loop {
                match chars.next() {
                    Some(',') => break,
                    Some(c) => field.push(c),
                    None => {
                        fields.push(field);
                        return Ok(fields);
                    }
                }
            }
        }
        fields.push(field);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::AUTHENTICATED_GROUP;

    #[test]
    fn parses_kube_apiserver_format() {
        let users = parse(
            "# comment\nt1,alice,u1,\"porch-authors,porch-approvers\"\nt2,bob,u2\n\nt3,carol,u3,solo\n",
        )
        .expect("parse");
        let alice = &users["t1"];
        assert_eq!(alice.name, "alice");
        assert_eq!(alice.uid, "u1");
        assert_eq!(
            alice.groups,
            vec!["porch-authors", "porch-approvers", AUTHENTICATED_GROUP]
        );
        assert_eq!(users["t2"].groups, vec![AUTHENTICATED_GROUP]);
        assert_eq!(users["t3"].groups, vec!["solo", AUTHENTICATED_GROUP]);
    }

    #[test]
    fn rejects_broken_lines() {
        assert_eq!(parse("t1,alice").map(|_| ()).expect_err("refused").0, 1);
        assert!(parse("t1,alice,u1,\"open").is_err());
        assert!(parse("t1,alice,u1\nt1,bob,u2").is_err());
        assert!(parse(",alice,u1").is_err());
    }

    #[tokio::test]
    async fn rereads_the_file_when_it_changes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("tokens.csv");
        std::fs::write(&path, "t1,alice,u1\n").expect("write");
        let f = TokenFile::open(&path).expect("open");
        let user = f.authenticate_token("t1").await.expect("ok");
        assert_eq!(user.map(|u| u.name).as_deref(), Some("alice"));
        assert_eq!(f.authenticate_token("t2").await, Ok(None));

        std::fs::write(&path, "t2,bob,u2,dev\n").expect("write");
        let later = SystemTime::now() + Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|file| file.set_modified(later))
            .expect("touch");
        // Force the next request to look at the file.
        f.state.write().expect("lock").checked = Instant::now() - RECHECK * 2;
        let bob = f.authenticate_token("t2").await.expect("ok").expect("bob");
        assert_eq!(bob.groups, vec!["dev", AUTHENTICATED_GROUP]);
        assert_eq!(f.authenticate_token("t1").await, Ok(None));
    }
}
