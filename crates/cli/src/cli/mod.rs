//! Command-line definition (clap). Validation beyond syntax happens in
//! `common` and the command modules, into plain config structs.

use clap::{Args, Parser, Subcommand};

pub const AFTER_HELP: &str = "\
Exit status:
  0  success (figures the machine was too noisy to measure are still printed, marked \"noisy\")
  1  a measurement or file operation failed
  2  invalid usage or input (bad flag, value, CPU, size, path)

Every measuring command pins itself to one CPU (the highest allowed) unless
--cpu or --no-pin says otherwise, and writes its figures as a JSON profile with
--json FILE (\"-\" for stdout, which then replaces the text summary).";

/// hwcal: measure what this machine really does.
///
/// Core clock, caches, TLBs, memory, context switches and I/O, each figure
/// with its spread and a noise verdict.
#[derive(Debug, Parser)]
#[command(name = "hwcal", version, about, long_about = None, after_help = AFTER_HELP)]
pub struct Cli {
    /// Results database: an SQLite file, or postgres://USER[:PASSWORD]@HOST[:PORT]/DBNAME
    /// or libpq's 'host=H user=U dbname=D' (no TLS; PGPASSWORD is read, and keeps the
    /// password off the command line; every exchange with the server is limited to 10 s
    /// to connect and 30 s a statement, HWCAL_PG_TIMEOUT_S=N or connect_timeout=N to
    /// change) (default: $HWCAL_DB, else $XDG_DATA_HOME/hwcal/hwcal.db, else
    /// ~/.local/share/hwcal/hwcal.db).
    #[arg(long, global = true, value_name = "PATH|URL")]
    pub db: Option<std::path::PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The full calibration: machine info and every registered probe.
    Run(RunArgs),
    /// What the OS and CPUID say about this machine (nothing measured).
    Info(InfoArgs),
    /// Core clock by two methods (lmbench mhz's GCD and a dependent add chain), and the TSC.
    Clock(ClockArgs),
    /// Re-run the analysis on a saved JSON profile's raw data.
    Analyze(AnalyzeArgs),
    /// Cache levels and memory latency (The Calibrator): latency vs working set, line size, MLP.
    Cache(CacheArgs),
    /// TLB levels for 4 KiB and 2 MiB pages, and the huge-page penalty (PS3 TLB note).
    Tlb(TlbArgs),
    /// Memory latency and bandwidth (micbench-mem): random chase or sequential read/write/copy.
    Mem(MemArgs),
    /// Check hwcal's figures against long independent reference measurements.
    Validate(ValidateArgs),
    /// The results database: list, show, compare, export, import, remove, push stored runs.
    Db(DbArgs),
    /// A self-contained HTML report of a stored run, or of two runs compared.
    Report(ReportArgs),
    /// Context-switch latency (lmbench lat_ctx): a ring of processes passing a token over pipes.
    Ctx(CtxArgs),
    /// Storage I/O: IOPS, bandwidth and latency percentiles (micbench-io, fio).
    Io(IoArgs),
    /// Shell completion script (bash, zsh, fish, elvish, powershell) on stdout.
    #[command(after_help = "\
Install, e.g.:
  bash: hwcal completions bash > ~/.local/share/bash-completion/completions/hwcal
  zsh:  hwcal completions zsh > ~/.zfunc/_hwcal   (with fpath+=~/.zfunc before compinit)
  fish: hwcal completions fish > ~/.config/fish/completions/hwcal.fish")]
    Completions(CompletionsArgs),
    /// Man pages: hwcal.1 on stdout, or hwcal.1 and one page per subcommand into DIR.
    Man(ManArgs),
    /// The JSON Schema (draft 2020-12) of the profiles --json writes, on stdout.
    Schema,
}

/// How `--help` groups the subcommands (clap lists them in one block): each
/// subcommand in exactly one group, in this order (a test checks that every
/// subcommand is listed once).
pub const SUBCOMMAND_GROUPS: &[(&str, &[&str])] = &[
    (
        "Measure",
        &["run", "clock", "cache", "tlb", "mem", "ctx", "io", "validate"],
    ),
    ("Results", &["db", "report", "analyze"]),
    ("Tools", &["info", "completions", "man", "schema", "help"]),
];

/// The clap command with the grouped subcommand list in its help: what
/// `main` parses with and the completions are generated from (the man pages
/// use the derive's command: the template means nothing to roff).
pub fn command() -> clap::Command {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    let heading = *cmd.get_styles().get_header();
    let literal = *cmd.get_styles().get_literal();
    cmd.build();
    let width = cmd
        .get_subcommands()
        .map(|c| c.get_name().len())
        .max()
        .unwrap_or(0);
    let mut groups = String::new();
    for (title, names) in SUBCOMMAND_GROUPS {
        groups.push_str(&format!("{heading}{title} commands:{heading:#}\n"));
        for name in *names {
            let about = cmd
                .find_subcommand(name)
                .and_then(|c| c.get_about())
                .map(|a| a.to_string())
                .unwrap_or_default();
            let pad = " ".repeat(width - name.len().min(width));
            groups.push_str(&format!("  {literal}{name}{literal:#}{pad}  {about}\n"));
        }
        groups.push('\n');
    }
    cmd.help_template(format!(
        "{{before-help}}{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{groups}{heading}Options:{heading:#}\n{{options}}{{after-help}}"
    ))
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Run only these probes (comma-separated; see --list).
    #[arg(long, value_delimiter = ',', value_name = "PROBES")]
    pub only: Vec<String>,
    /// Skip these probes (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "PROBES")]
    pub skip: Vec<String>,
    /// List the registered probes and exit.
    #[arg(long)]
    pub list: bool,
    /// Do not store this run in the results database (`--save`, the default, is accepted).
    #[arg(long, conflicts_with = "save")]
    pub no_save: bool,
    /// Also write the HTML report of this run to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<String>,
    /// Also measure I/O in directory PATH: 4 KiB random reads, O_DIRECT, io_uring at queue
    /// depth 32 for 2 s on a 256 MiB test file that is removed afterwards.
    #[arg(long, value_name = "PATH")]
    pub io: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct InfoArgs {
    /// Write the JSON profile to FILE ("-" for stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
}

#[derive(Debug, Args)]
pub struct ClockArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Batches to collect (at least 4); each gives one estimate per method (more = longer, steadier).
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(4..=10_000))]
    pub batches: u32,
    /// Attempts before reporting "noisy" (like mhz's retries before "too busy").
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub retries: u32,
}

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// A JSON profile written by `hwcal ... --json`.
    pub file: std::path::PathBuf,
    /// Write the re-analysed profile to FILE ("-" for stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    #[command(flatten)]
    pub plots: PlotArgs,
}

/// Plot outputs shared by `cache` and `tlb`.
#[derive(Debug, Args, Clone, Default)]
pub struct PlotArgs {
    /// Write The Calibrator's .data + gnuplot .gp files for what the profile holds:
    /// PREFIX.cache-miss-latency.{data,gp} and PREFIX.cache-replace-time.{data,gp} from cache
    /// data, PREFIX.TLB-miss-latency.{data,gp} from TLB data (`cache` writes the first four,
    /// `tlb` the last two, `analyze` on a `run` profile all six). Scripts name their data by
    /// file name: run `gnuplot PREFIX.*.gp` where the files are.
    #[arg(long, value_name = "PREFIX")]
    pub gnuplot: Option<String>,
    /// Write SVG plots (curves with the detected levels marked) into directory DIR.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct CacheArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub plots: PlotArgs,
    /// Largest working set to measure (e.g. 64M, 1G; default 4x the nominal last-level cache,
    /// at most a quarter of available memory).
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub max_size: Option<String>,
}

#[derive(Debug, Args)]
pub struct TlbArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub plots: PlotArgs,
    /// Most 4 KiB pages to visit (16..=1048576; the default is 4x a 2048-entry STLB).
    #[arg(long, default_value_t = 8192, value_parser = clap::value_parser!(u64).range(16..=1_048_576))]
    pub max_pages: u64,
    /// Most 2 MiB pages to visit (0 skips the huge-page test; capped by available memory).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(0..=65_536))]
    pub max_huge_pages: u64,
}

/// Sequential operation of `hwcal mem`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MemOp {
    Read,
    Write,
    Copy,
}

#[derive(Debug, Args)]
pub struct MemArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Number of threads (micbench's multiplicity) [default: 1; with --sweep: every allowed CPU].
    #[arg(short = 'm', long = "threads", value_name = "N")]
    pub threads: Option<u32>,
    /// Seconds to measure (fractions allowed); buffer setup comes on top.
    #[arg(short = 't', long = "time", value_name = "SECS", default_value = "2")]
    pub time: String,
    /// Random access: a dependent pointer chase (latency). Default: sequential (bandwidth).
    #[arg(short = 'R', long)]
    pub random: bool,
    /// Sequential operation.
    #[arg(long, value_enum, default_value = "read", conflicts_with = "random")]
    pub op: MemOp,
    /// Buffer size, 1024-based suffixes k/M/G (e.g. 32K, 128KB, 1G).
    #[arg(
        short = 's',
        long,
        value_name = "SIZE",
        default_value = "256M",
        allow_hyphen_values = true
    )]
    pub size: String,
    /// Thread TID runs on CPU and its memory is bound to NUMA NODE (repeatable), e.g. -a 0:c0:0.
    #[arg(short = 'a', long = "affinity", value_name = "TID:cCPU:NODE")]
    pub affinity: Vec<String>,
    /// One buffer of SIZE per thread (default: one shared buffer of SIZE).
    #[arg(short = 'L', long)]
    pub local: bool,
    /// Back buffers with transparent huge pages (verified in /proc/self/smaps).
    #[arg(long, conflicts_with = "hugetlbfile")]
    pub hugepages: bool,
    /// Back buffers with a file on a hugetlbfs mount (a directory on it, or a file path in it).
    #[arg(long, value_name = "PATH")]
    pub hugetlbfile: Option<std::path::PathBuf>,
    /// Write and copy with non-temporal (streaming) stores instead of regular ones.
    #[arg(long, conflicts_with = "random")]
    pub nontemporal: bool,
    /// Bandwidth sweep: read, write, copy with 1..N threads, then loaded latency
    /// (one chasing thread while the others stream); -t is shared among the points.
    #[arg(long, conflicts_with_all = ["random", "numa_matrix"])]
    pub sweep: bool,
    /// Latency from every CPU node to every memory node (random chase); -t is shared among the cells.
    #[arg(long)]
    pub numa_matrix: bool,
    /// With -R: each thread follows K independent chases at once (1, 2, 4, 8, 16): time per
    /// load then shows memory-level parallelism instead of latency.
    #[arg(long, value_name = "K", default_value_t = 1, requires = "random")]
    pub chains: usize,
    /// After the summary, every recorded key and value (micbench's -v): the whole result,
    /// one line per thread, per NUMA cell and per bandwidth point.
    #[arg(short = 'v', long)]
    pub verbose: bool,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// What to validate.
    #[arg(value_enum)]
    pub what: ValidateWhat,
    /// Consecutive runs.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub runs: u32,
    /// Length of each long reference measurement, ms.
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u64).range(10..=60_000))]
    pub reference_ms: u64,
    /// Profiles to summarise (`validate profiles` only).
    #[arg(value_name = "FILE")]
    pub files: Vec<std::path::PathBuf>,
    /// `validate cache` only: also write each run's JSON profile to
    /// DIR/run-NN.json (DIR is created if missing; existing run files are
    /// never overwritten), to look into an odd run or summarise the runs
    /// again with `validate profiles DIR/run-*.json`.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<std::path::PathBuf>,
    /// Pin the measuring thread to this CPU (default: the highest allowed CPU).
    #[arg(long, value_name = "N", conflicts_with = "no_pin")]
    pub cpu: Option<usize>,
    /// Do not pin the measuring thread.
    #[arg(long)]
    pub no_pin: bool,
    /// No progress messages on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

impl ValidateArgs {
    /// The pinning options as the measuring commands take them (validate
    /// prints a table: it writes no profile and stores nothing, so it
    /// offers neither --json nor --save).
    pub fn common(&self) -> CommonArgs {
        CommonArgs {
            cpu: self.cpu,
            no_pin: self.no_pin,
            quiet: self.quiet,
            ..CommonArgs::default()
        }
    }
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ValidateWhat {
    /// `hwcal clock` against a long dependent-add measurement before and after each run.
    Clock,
    /// The cache and TLB probes N times: each figure's min/median/max beside a run's
    /// own 95% interval ("moved" where the runs differ by more than twice it), and how
    /// often the runs agree on the levels.
    Cache,
    /// The same summary over profiles already written (`hwcal run --json FILE`, ...).
    Profiles,
}

#[derive(Debug, Args)]
pub struct DbArgs {
    #[command(subcommand)]
    pub command: DbCommand,
}

#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// One line per stored run (id, date, host, key figures), grouped by machine.
    List {
        /// A JSON array of the runs' summaries on stdout instead.
        #[arg(long)]
        json: bool,
    },
    /// The summary of a stored run.
    Show {
        /// A run: an id, `latest`, `host:NAME` or `machine:ID-PREFIX` (that machine's latest run).
        id: String,
        /// The run's summary and whole profile as JSON on stdout instead.
        #[arg(long)]
        json: bool,
    },
    /// Two runs side by side, with the ratio B / A of every figure both measured.
    Compare {
        /// Run A: an id, `latest`, `host:NAME` or `machine:ID-PREFIX` (that machine's latest run).
        a: String,
        /// Run B, likewise.
        b: String,
        /// Print the comparison as JSON (rows with a, b, ratio, verdict; notes).
        #[arg(long)]
        json: bool,
    },
    /// A stored run's JSON profile (raw curves included), or runs as a CSV or Markdown table
    /// (one row per run; every run when none is named).
    Export {
        /// Runs (ids, `latest`, `host:NAME`, `machine:ID-PREFIX`); JSON takes exactly one.
        ids: Vec<String>,
        /// Write the JSON profile to FILE instead of stdout ("-" = stdout).
        #[arg(long, value_name = "FILE", conflicts_with_all = ["csv", "markdown"])]
        json: Option<String>,
        /// A CSV table on stdout: one row per run, unit-suffixed columns (l1_size_kib, ...).
        #[arg(long, conflicts_with = "markdown")]
        csv: bool,
        /// The same table in Markdown on stdout.
        #[arg(long)]
        markdown: bool,
    },
    /// Store JSON profiles from files (e.g. other machines' `--json` output).
    Import {
        /// JSON profiles written by `hwcal ... --json` or `hwcal db export`; all are checked
        /// before any is stored.
        #[arg(required = true)]
        files: Vec<std::path::PathBuf>,
    },
    /// Remove stored runs.
    Rm {
        /// Run ids (all must exist, else none is removed).
        #[arg(required = true)]
        ids: Vec<String>,
    },
    /// Copy the runs of this database (--db) to another, e.g. a shared PostgreSQL;
    /// runs already there are not stored again.
    Push {
        /// The target: postgres://USER[:PASSWORD]@HOST[:PORT]/DBNAME, or an SQLite file.
        #[arg(long, value_name = "URL")]
        to: std::path::PathBuf,
    },
    /// A static web site of all runs: one row per machine, each run's report, comparisons.
    Site {
        /// A new or empty directory, or an earlier `db site` output (rewritten; nothing else is).
        dir: std::path::PathBuf,
    },
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to write the completion script for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Directory to write hwcal.1 and hwcal-SUBCOMMAND.1 into (created if missing);
    /// without it hwcal.1 goes to stdout (`hwcal man > hwcal.1; man ./hwcal.1`).
    #[arg(value_name = "DIR")]
    pub dir: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Zero, one or two runs: a run id, `latest`, `host:NAME`, or a JSON profile file.
    /// None = the latest run; two = a comparison (A then B).
    #[arg(value_name = "ID", num_args = 0..=2)]
    pub ids: Vec<String>,
    /// Write the HTML report to FILE ("-" for stdout).
    #[arg(long, value_name = "FILE", required = true)]
    pub html: String,
}

mod common_args;
mod ctx_io;
pub use common_args::CommonArgs;
pub use ctx_io::*;

#[cfg(test)]
mod tests;
