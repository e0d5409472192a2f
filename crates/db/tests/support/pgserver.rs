//! A throw-away PostgreSQL server for tests: Debian's `postgresql` binaries
//! (`initdb`, `pg_ctl` under /usr/lib/postgresql/*/bin or on PATH), a
//! cluster in a temporary directory, password (SCRAM) authentication, TCP
//! on 127.0.0.1 at a free port and its unix socket in the same directory.
//! Stopped and removed when dropped, also when the test fails. As root,
//! `initdb` refuses to run, so the cluster runs as `nobody` (the directory
//! is handed to it). Shared by the db crate's and the CLI's tests
//! (`#[path]`-included).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The test cluster's superuser and password.
pub const USER: &str = "hwcal";
pub const PASSWORD: &str = "hwcal-test-pw";

pub struct PgServer {
    dir: tempfile::TempDir,
    bin: PathBuf,
    /// Run the server's tools as this user (`nobody` when we are root).
    run_as: Option<String>,
    pub port: u16,
}

/// The directory holding `initdb` and `pg_ctl`, newest version first.
fn bin_dir() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|d| d.join("initdb").is_file() && d.join("pg_ctl").is_file())
        .collect();
    dirs.sort_by_key(|d| {
        let v = d
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str())
            .unwrap_or("");
        std::cmp::Reverse(v.parse::<u32>().unwrap_or(0))
    });
    dirs.into_iter().next().or_else(|| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path).find(|d| d.join("initdb").is_file() && d.join("pg_ctl").is_file())
    })
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl PgServer {
    /// Start a server, or `None` (with the reason on stderr) where the
    /// PostgreSQL binaries are not installed.
    pub fn start() -> Option<PgServer> {
        Self::start_with(false)
    }

    /// A server that takes TCP connections over TLS only (`hostssl` in
    /// pg_hba.conf, every other TCP connection rejected), its certificate
    /// signed by a CA made for it ([`PgServer::ca`]) and naming `localhost`
    /// only (not 127.0.0.1); a second, unrelated CA ([`PgServer::other_ca`])
    /// for refusals. `None` (with the reason on stderr) where PostgreSQL or
    /// `openssl` is not installed.
    pub fn start_tls() -> Option<PgServer> {
        if Command::new("openssl").arg("version").output().is_err() {
            eprintln!("SKIP: openssl is not installed (it makes the test CA and certificate)");
            return None;
        }
        Self::start_with(true)
    }

    /// The CA file that signed a TLS server's certificate.
    pub fn ca(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// A CA that signed nothing of this server's.
    pub fn other_ca(&self) -> PathBuf {
        self.dir.path().join("other-ca.pem")
    }

    /// The CA, the server's key and certificate (for `localhost`), and an
    /// unrelated CA, in the cluster's directory.
    fn make_certs(&self) {
        let d = self.dir.path();
        let run = |args: &[&str]| {
            let out = Command::new("openssl")
                .args(args)
                .current_dir(d)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "openssl {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        let ca_ext = [
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ];
        for (key, cert, name) in [
            ("ca.key", "ca.pem", "hwcal test CA"),
            ("other-ca.key", "other-ca.pem", "another CA"),
        ] {
            let subj = format!("/CN={name}");
            let mut a = vec![
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
            ];
            a.extend(["-keyout", key, "-out", cert, "-days", "2", "-subj", &subj]);
            a.extend(ca_ext);
            run(&a);
        }
        run(&[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=localhost",
        ]);
        std::fs::write(
            d.join("server.ext"),
            "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n",
        )
        .unwrap();
        run(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "2",
            "-extfile",
            "server.ext",
        ]);
        // The server reads its key only if no one else may.
        let key = d.join("server.key");
        let mut perm = std::fs::metadata(&key).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o600);
        std::fs::set_permissions(&key, perm).unwrap();
        if self.run_as.is_some() {
            Command::new("chown")
                .args([
                    "nobody:",
                    key.to_str().unwrap(),
                    d.join("server.pem").to_str().unwrap(),
                ])
                .status()
                .unwrap();
        }
    }

    fn start_with(tls: bool) -> Option<PgServer> {
        let Some(bin) = bin_dir() else {
            eprintln!(
                "SKIP: PostgreSQL is not installed (no initdb/pg_ctl under /usr/lib/postgresql/*/bin \
                 or on PATH; `apt-get install postgresql`, as .ci/run does)"
            );
            return None;
        };
        let dir = tempfile::Builder::new().prefix("hwcal-pg-").tempdir().unwrap();
        let run_as = is_root().then(|| "nobody".to_string());
        if run_as.is_some() {
            // The cluster's files belong to the user that runs it.
            let st = Command::new("chown")
                .args(["-R", "nobody:", dir.path().to_str().unwrap()])
                .status()
                .unwrap();
            assert!(st.success(), "chown of the test cluster's directory failed");
        }
        let s = PgServer {
            dir,
            bin,
            run_as,
            port: free_port(),
        };
        let pw = s.dir.path().join("pw");
        std::fs::write(&pw, PASSWORD).unwrap();
        if s.run_as.is_some() {
            Command::new("chown")
                .args(["nobody:", pw.to_str().unwrap()])
                .status()
                .unwrap();
        }
        let data = s.data();
        let out = s.tool(
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-U",
                USER,
                "--auth=scram-sha-256",
                &format!("--pwfile={}", pw.display()),
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50",
            s.port,
            s.dir.path().display()
        );
        if tls {
            s.make_certs();
            let d = s.dir.path();
            std::fs::write(
                data.join("pg_hba.conf"),
                "local all all scram-sha-256\nhostssl all all 127.0.0.1/32 scram-sha-256\nhost all all 0.0.0.0/0 reject\n",
            )
            .unwrap();
            opts += &format!(
                " -c ssl=on -c ssl_cert_file={} -c ssl_key_file={}",
                d.join("server.pem").display(),
                d.join("server.key").display()
            );
        }
        let log = s.dir.path().join("log");
        let out = s.tool(
            "pg_ctl",
            &[
                "-D",
                data.to_str().unwrap(),
                "-l",
                log.to_str().unwrap(),
                "-w",
                "-t",
                "60",
                "-o",
                &opts,
                "start",
            ],
        );
        assert!(
            out.status.success(),
            "pg_ctl start failed: {}{}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        Some(s)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Run one of the server's tools (as `nobody` when we are root).
    fn tool(&self, name: &str, args: &[&str]) -> Output {
        let exe = self.bin.join(name);
        let mut c = match &self.run_as {
            Some(u) => {
                let mut c = Command::new("runuser");
                c.args(["-u", u, "--"]).arg(&exe);
                c
            }
            None => Command::new(&exe),
        };
        c.args(args).current_dir(self.dir.path()).output().unwrap()
    }

    /// The URL of database `db` with the right password.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://{USER}:{PASSWORD}@127.0.0.1:{}/{db}", self.port)
    }

    /// The URL of database `db` through the unix socket in the directory.
    pub fn socket_url(&self, db: &str) -> String {
        format!(
            "postgres://{USER}:{PASSWORD}@localhost:{}/{db}?host={}",
            self.port,
            self.dir.path().display()
        )
    }

    /// Create database `name`; its URL.
    pub fn create_db(&self, name: &str) -> String {
        let out = Command::new(self.bin.join("createdb"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", USER, name])
            .env("PGPASSWORD", PASSWORD)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "createdb: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.url(name)
    }

    /// Run SQL with psql; its output (tuples only, unaligned).
    pub fn psql(&self, db: &str, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                USER,
                "-d",
                db,
            ])
            .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .env("PGPASSWORD", PASSWORD)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "psql: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The postmaster's process id (the first line of `postmaster.pid`).
    pub fn postmaster_pid(&self) -> u32 {
        let f = std::fs::read_to_string(self.data().join("postmaster.pid")).unwrap();
        f.lines().next().unwrap().trim().parse().unwrap()
    }

    /// The process ids of the backends serving hwcal's connections
    /// (`application_name` `hwcal`) to database `db`.
    pub fn hwcal_backends(&self, db: &str) -> Vec<u32> {
        self.psql(
            "postgres",
            &format!(
                "SELECT pid FROM pg_stat_activity WHERE application_name = 'hwcal' AND datname = '{db}'"
            ),
        )
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
    }
}

/// A server process stopped with SIGSTOP (it keeps its sockets: the kernel
/// still accepts connections and acknowledges data, but nothing answers),
/// continued when this is dropped, also when the test fails, so the
/// server's own shutdown (`pg_ctl stop`) does not wait on it.
pub struct Paused(u32);

impl Paused {
    pub fn new(pid: u32) -> Paused {
        signal(pid, "STOP");
        Paused(pid)
    }
}

impl Drop for Paused {
    fn drop(&mut self) {
        signal(self.0, "CONT");
    }
}

/// Send a signal with kill(1): as root the server runs as `nobody`, which
/// root may signal; otherwise it runs as the test's own user.
fn signal(pid: u32, sig: &str) {
    let st = Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(st.success(), "kill -{sig} {pid} failed");
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let data = self.data();
        let _ = self.tool(
            "pg_ctl",
            &["-D", data.to_str().unwrap(), "-m", "immediate", "-w", "stop"],
        );
        // The temporary directory goes with `self.dir`.
    }
}
