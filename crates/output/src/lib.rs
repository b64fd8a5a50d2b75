//! Run directories: `summary.json` and one Parquet file per time series (`flows`, `links`,
//! `sojourn`, `owd`). The one writer of what `ccbench run`, `Result.save` and `ccbench emu`
//! leave on disk, so the Python side never needs pyarrow to save and both back ends agree.

#![forbid(unsafe_code)]

pub mod parquet_table;

use std::path::Path;
use std::sync::Arc;

use ccbench_scenario::results::SimResult;
use ccbench_scenario::results::Summary;

pub use parquet_table::{write_parquet, Column, Table};

/// Names as a shared list for [`Column::Names`].
pub fn names(names: &[String]) -> Arc<[String]> {
    names.iter().cloned().collect()
}

/// The run's time series as tables; flow/link columns are names, as documented.
pub fn series_tables(r: SimResult) -> Vec<(&'static str, Table)> {
    let flow_names = names(&r.flow_names);
    let link_names = names(&r.link_names);
    let flow = |idx: Vec<u32>| Column::Names { idx, names: flow_names.clone() };
    let link = |idx: Vec<u32>| Column::Names { idx, names: link_names.clone() };
    let ints = |v: Vec<u64>| Column::I64(v.into_iter().map(|x| x as i64).collect());
    let table = |cols: Vec<(&str, Column)>| Table {
        columns: cols.into_iter().map(|(n, c)| (n.to_string(), c)).collect(),
    };
    let (f, l, s, o) = (r.flows, r.links, r.sojourn, r.owd);
    vec![
        (
            "flows",
            table(vec![
                ("t_s", Column::F64(f.t_s)),
                ("flow", flow(f.flow)),
                ("goodput_mbps", Column::F64(f.goodput_mbps)),
                ("throughput_mbps", Column::F64(f.throughput_mbps)),
                ("cwnd_bytes", Column::F64(f.cwnd_bytes)),
                ("ssthresh_bytes", Column::F64(f.ssthresh_bytes)),
                ("srtt_ms", Column::F64(f.srtt_ms)),
                ("inflight_bytes", Column::F64(f.inflight_bytes)),
                ("retransmits", ints(f.retransmits)),
                ("losses", ints(f.losses)),
                ("ecn_reductions", ints(f.ecn_reductions)),
            ]),
        ),
        (
            "links",
            table(vec![
                ("t_s", Column::F64(l.t_s)),
                ("link", link(l.link)),
                ("queue_bytes", Column::F64(l.queue_bytes)),
                ("queue_packets", Column::F64(l.queue_packets)),
                ("utilization", Column::F64(l.utilization)),
                ("throughput_mbps", Column::F64(l.throughput_mbps)),
                ("drops", ints(l.drops)),
                ("arrivals", ints(l.arrivals)),
                ("random_losses", ints(l.random_losses)),
                ("ecn_marks", ints(l.ecn_marks)),
                ("departed_bytes", ints(l.departed_bytes)),
                ("aqm_probability", Column::F64(l.aqm_probability)),
            ]),
        ),
        (
            "sojourn",
            table(vec![
                ("t_s", Column::F64(s.t_s)),
                ("link", link(s.link)),
                ("flow", flow(s.flow)),
                ("sojourn_ms", Column::F64(s.sojourn_ms)),
            ]),
        ),
        (
            "owd",
            table(vec![
                ("t_s", Column::F64(o.t_s)),
                ("flow", flow(o.flow)),
                ("owd_ms", Column::F64(o.owd_ms)),
            ]),
        ),
    ]
}

/// Write `summary.json` and the series into `dir`, a folder this process created and no one
/// else writes (a `ccbench_files::StagedDir`'s, swapped in whole by the caller), so plain paths
/// inside it are safe.
pub fn write_run_into(dir: &Path, summary: &Summary, series: &[(&str, Table)]) -> Result<(), String> {
    let err = |p: &Path, e: &dyn std::fmt::Display| format!("{}: {e}", p.display());
    for (name, table) in series {
        let path = dir.join(format!("{name}.parquet"));
        write_parquet(&path, table).map_err(|e| err(&path, &e))?;
    }
    let json = serde_json::to_string_pretty(summary).map_err(|e| err(dir, &e))?;
    let path = dir.join("summary.json");
    ccbench_files::write_atomic(&path, (json + "\n").as_bytes()).map(drop).map_err(|e| e.to_string())
}
