//! The dumbbell, written as `[bottleneck]`: one link `bottleneck` from router `r1` to router `r2`
//! (and `bottleneck-rev` back), crossed by every flow. Each flow's `rtt` is its whole base RTT
//! (default `bottleneck.rtt`); what the bottleneck's own delay does not cover is the flow's access
//! delay, so flows of different RTTs share one queue.
//!
//! ```text
//! s_i --access_i--> r1 ==bottleneck==> r2 --> d_i
//! s_i <--access_i-- r1 <==bottleneck-rev== r2 <-- d_i
//! ```
//!
//! ACKs never meet a small buffer on the way back: the reverse queue is generous by design.

use toml::Table;

use super::builder::{parse_changes, parse_props, LinkProps, TopologyBuilder, PROP_KEYS};
use super::Attach;
use crate::fields::{check_keys, get_rate, R};
use crate::{BufferSize, Nanos, Params, Topology};

pub const BOTTLENECK: &str = "bottleneck";
const REVERSE_QUEUE_PACKETS: u64 = 10_000;

pub fn build(t: &Table, duration: Nanos) -> R<(Topology, Attach)> {
    let p = "bottleneck";
    let keys: Vec<&str> = PROP_KEYS.iter().copied().chain(["reverse_rate", "changes"]).collect();
    check_keys(t, p, &keys)?;
    let fwd = parse_props(t, p)?;
    let rev = LinkProps {
        rate: get_rate(t, p, "reverse_rate")?.unwrap_or(fwd.rate),
        buffer: BufferSize::Packets(REVERSE_QUEUE_PACKETS),
        aqm: "droptail".into(),
        aqm_params: Params::new(),
        ecn: false,
        jitter: 0,
        jitter_reorder: false,
        rate_max: None,
        loss: 0.0,
        trace: None,
        ..fwd.clone()
    };
    let changes = parse_changes(t, p, duration, fwd.trace.is_some())?;
    let mut b = TopologyBuilder::default();
    let ends = (b.node("r1"), b.node("r2"));
    let link = b.link(BOTTLENECK, p, ends, &fwd)?;
    let reverse = b.reverse(link, p, &rev)?;
    b.changes(link, Some(reverse), &changes);
    Ok((b.finish("dumbbell"), Attach::Dumbbell { link, reverse, default_rtt: fwd.rtt }))
}
