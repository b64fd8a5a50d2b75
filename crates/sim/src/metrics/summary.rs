//! A link's summary over the measurement window, assembled in one place for the simulator and
//! the emulator from what each of them measured ([`LinkWindow`]).

use super::{LinkSummary, LossEvents, Percentiles};
use crate::net::LinkCounters;
use crate::scenario::LinkSpec;

/// The fLEDBAT paper's sharing metrics among the TCP flows crossing a link (None for fewer than
/// two flows, or where the back end does not measure them).
#[derive(Clone, Copy, Debug, Default)]
pub struct Sharing {
    pub jain_long: Option<f64>,
    pub jain_short: Option<f64>,
    pub lbe_share: Option<f64>,
}

/// What one link did over the measurement window.
pub struct LinkWindow<'a> {
    pub spec: &'a LinkSpec,
    /// The topology's node names.
    pub nodes: &'a [String],
    /// The rate at the end of the run (scheduled changes included).
    pub rate: f64,
    /// The window's counters (end minus start), with the transmitter's engaged time up to the
    /// window's end in `busy_ns`.
    pub counters: LinkCounters,
    pub window_s: f64,
    /// Queueing-delay percentiles (ms) of the packets that left in the window.
    pub queue_delay: Option<Percentiles>,
    pub queue_at_signal: Option<Percentiles>,
    /// Mean and least queue fill (fractions of the buffer).
    pub fill: (f64, f64),
    pub losses: LossEvents,
    pub sharing: Sharing,
}

pub fn link_summary(w: LinkWindow<'_>) -> LinkSummary {
    let c = w.counters;
    let lost = c.drops() + c.random_losses;
    let bits = c.bytes_departed as f64 * 8.0;
    LinkSummary {
        name: w.spec.name.clone(),
        from: w.nodes[w.spec.from].clone(),
        to: w.nodes[w.spec.to].clone(),
        rate_mbps: w.rate / 1e6,
        utilization: c.busy_ns as f64 / 1e9 / w.window_s,
        throughput_mbps: bits / w.window_s / 1e6,
        drops: c.drops(),
        overflow_drops: c.overflow_drops,
        aqm_drops: c.aqm_drops,
        ecn_marks: c.ecn_marks,
        random_losses: c.random_losses,
        bytes_departed: c.bytes_departed,
        packets: c.arrivals,
        loss_rate: if c.arrivals > 0 { lost as f64 / c.arrivals as f64 } else { 0.0 },
        // Measured links report percentiles even over an empty window (all zero).
        queue_delay_ms: w.spec.measure_sojourn.then(|| w.queue_delay.unwrap_or_default()),
        queue_at_signal_packets: w.queue_at_signal,
        efficiency: bits / w.window_s / w.rate,
        jain_long: w.sharing.jain_long,
        jain_short: w.sharing.jain_short,
        lbe_share: w.sharing.lbe_share,
        queue_fill_mean: w.fill.0,
        queue_fill_min: w.fill.1,
        loss_events: w.losses.events,
        loss_event_distance_s: w.losses.distance_s,
    }
}
