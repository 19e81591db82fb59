//! The engine on standard input/output without a network (pure MCTS with uniform priors), for
//! trying it with a GUI before the `atomzero uci` command exists:
//! `cargo run --release -p atomzero-uci --example stdio`.

fn main() -> std::io::Result<()> {
    atomzero_uci::run_stdio(atomzero_uci::EngineConfig::default(), atomzero_uci::NoModelLoader)
}
