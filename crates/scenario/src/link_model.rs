//! The link model a link spec describes, built alike for the simulator's links and the
//! emulator's.

use ccbench_aqm::{build_queue, QueueConfig, QueuedPacket};

use crate::rng;
use crate::LinkSpec;

/// The link model of topology link `index` as a scenario declares it — queue, rate, loss, delay,
/// jitter, token bucket, rate spread, delivery trace — with the scenario's random streams, for
/// any packet type: the simulator's links and the emulator's are built here alike.
pub fn link_model<P: QueuedPacket + Send + 'static>(
    spec: &LinkSpec,
    seed: u64,
    index: usize,
) -> Result<ccbench_link::Link<P>, String> {
    let cfg = QueueConfig { limit: spec.limit, ecn: spec.ecn, seed: rng::queue_seed(seed, index as u64) };
    let queue =
        build_queue(&spec.aqm, cfg, &spec.aqm_params).map_err(|e| format!("link \"{}\": {e}", spec.name))?;
    let streams = rng::link_streams(seed, index as u64);
    let mut link = ccbench_link::Link::new(
        spec.name.clone(),
        spec.rate,
        spec.delay,
        spec.jitter,
        spec.loss,
        queue,
        streams,
    );
    link.measure_sojourn = spec.measure_sojourn;
    link.set_reorder(spec.jitter_reorder);
    if let Some(s) = spec.shaper {
        link.set_token_bucket(s.burst, s.line_rate);
    }
    if let Some(max) = spec.rate_max {
        link.set_rate_spread(max / spec.rate, rng::stream(seed, "link-rate", index as u64));
    }
    if let Some(tr) = &spec.trace {
        link.set_delivery_trace(tr.trace.clone());
    }
    Ok(link)
}
