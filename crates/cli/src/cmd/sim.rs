//! `hwcal sim`: the analysis held to simulated machines' truth (`hwcal_sim::cli`).

crate::subcommand! { pub COMMAND = "sim" in Tools: hwcal_sim::cli::SimArgs => run,
"Simulated machines with known truth: the analysis's scorecard on them, one machine, models" }

pub fn run(a: hwcal_sim::cli::SimArgs) -> anyhow::Result<()> {
    let out = hwcal_sim::cli::run(&a, &crate::common::say_line)?;
    crate::output::write_output("-", out.text.as_bytes())?;
    out.failure.map_or(Ok(()), |f| Err(anyhow::anyhow!(f)))
}
