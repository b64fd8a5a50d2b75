//! HighSpeed TCP (RFC 3649) as Linux `tcp_highspeed.c`.
//!
//! Thesis §2.2.2.2 (L844-877), equations numbered as there, windows `w` in segments:
//!
//! * Eq. 2.27, per ACK `w += a(w) / w`; Eq. 2.28, on a congestion event `w = (1 - b(w)) w`.
//! * At or below `Low_Window = 38` HSTCP is NewReno: `a = 1`, `b = 0.5`.
//! * Eq. 2.30, `b(w) = (High_Decrease - 0.5) (log w - log Low_W) / (log High_W - log Low_W) + 0.5`
//!   with `High_W = 83000`, `High_Decrease = 0.1`.
//! * Eq. 2.31/2.32, `a(w) = w² p(w) 2 b(w) / (2 - b(w))` with `p(w) = 0.078 / w^1.2`, the inverse
//!   of the response function `w = 0.12 / p^0.835`.
//!
//! Linux does not evaluate these per ACK: it looks `w` up in RFC 3649 Appendix B, whose row
//! `k` (1-based) is the window at which `a(w)` reaches `k`. A window `w` uses the first row
//! whose window is `>= w` (so `a` is rounded *up* to the next integer and `b` *down* to the
//! row's), and `b` is stored as `md = floor(256 b)`. We embed the table's window column (it is
//! RFC 3649 App. B; Linux `hstcp_aimd_vals` has the same 72 rows, w = 38 … 89053) and compute
//! each row's `b` from Eq. 2.30 at that window: `floor(256 b)` reproduces every Linux `md` and
//! `b` rounded to two decimals every App. B entry (unit tests check both). The brief speaks of
//! 73 rows; the RFC/Linux table has 72 (a = 1 … 72).
//!
//! Linux details kept: the row index is only updated in congestion avoidance, so a loss that
//! ends the first slow start halves (`b` of row 1) whatever the window; `ssthresh =
//! max(w - (w·md >> 8), 2)`; the increase adds `a` per ACK (`snd_cwnd_cnt += ai + 1`), in every
//! kernel version: Linux HSTCP ignores how many segments an ACK covers, so delayed ACKs halve
//! its growth. Key `credit = "segments"` instead credits the stack's `segments_acked` (`a/w`
//! per segment). `aimd = "formula"` evaluates Eq. 2.30/2.31 at the current window instead of
//! the table (the RFC's own definition, ns-2 style).

use crate::newreno::{growth_allowed, slow_start, ABC_L, MIN_SSTHRESH_SEGMENTS};
use crate::scalable::whole_segments;
use crate::{
    AckSample, Cause, CcState, CongestionControl, CongestionEvent, ParamError, Params, PathInfo, Reaction,
};

/// RFC 3649 `Low_Window`: NewReno at or below this many segments.
pub const LOW_WINDOW: f64 = 38.0;
/// RFC 3649 `High_Window` and `High_Decrease`.
pub const HIGH_WINDOW: f64 = 83_000.0;
pub const HIGH_DECREASE: f64 = 0.1;

/// RFC 3649 Appendix B, column `w`: the window (segments) at which `a(w)` reaches row + 1.
/// Identical to the windows of Linux `hstcp_aimd_vals`.
pub const APPENDIX_B_WINDOWS: [u64; 72] = [
    38, 118, 221, 347, 495, 663, 851, 1058, 1284, 1529, 1793, 2076, 2378, 2699, 3039, 3399, 3778, 4177, 4596,
    5036, 5497, 5979, 6483, 7009, 7558, 8130, 8726, 9346, 9991, 10661, 11358, 12082, 12834, 13614, 14424,
    15265, 16137, 17042, 17981, 18955, 19965, 21013, 22101, 23230, 24402, 25618, 26881, 28193, 29557, 30975,
    32450, 33986, 35586, 37253, 38992, 40808, 42707, 44694, 46776, 48961, 51258, 53677, 56230, 58932, 61799,
    64851, 68113, 71617, 75401, 79517, 84035, 89053,
];

/// Eq. 2.30: the decrease fraction `b(w)`, 0.5 at or below `Low_Window`.
pub fn rfc_b(w: f64) -> f64 {
    if w <= LOW_WINDOW {
        return 0.5;
    }
    let frac = (w.ln() - LOW_WINDOW.ln()) / (HIGH_WINDOW.ln() - LOW_WINDOW.ln());
    (HIGH_DECREASE - 0.5) * frac + 0.5
}

/// Eq. 2.32: the loss rate the response function assigns to window `w`.
pub fn rfc_p(w: f64) -> f64 {
    0.078 / w.powf(1.2)
}

/// Eq. 2.31: the increase `a(w)` in segments per RTT, 1 at or below `Low_Window`.
pub fn rfc_a(w: f64) -> f64 {
    if w <= LOW_WINDOW {
        return 1.0;
    }
    let b = rfc_b(w);
    w * w * rfc_p(w) * 2.0 * b / (2.0 - b)
}

/// The RFC 3649 response function `w = 0.12 / p^0.835`.
pub fn response_window(p: f64) -> f64 {
    0.12 / p.powf(0.835)
}

/// Linux `hstcp_aimd_vals[row].md`: `floor(256 b)` at the row's window.
pub fn table_md(row: usize) -> u64 {
    (256.0 * rfc_b(APPENDIX_B_WINDOWS[row] as f64)).floor() as u64
}

/// Linux's row for a window: the first whose window is `>= w`, the last one above the table.
pub fn table_row(w: u64) -> usize {
    APPENDIX_B_WINDOWS.partition_point(|&row_w| row_w < w).min(APPENDIX_B_WINDOWS.len() - 1)
}

/// Where `a(w)` and `b(w)` come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aimd {
    /// RFC 3649 App. B rows as Linux uses them. Parameter value `"table"`.
    Table,
    /// Eq. 2.30/2.31 at the current window. Parameter value `"formula"`.
    Formula,
}

/// What one ACK credits towards `a/w`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Credit {
    /// One per ACK that acknowledges new data (Linux, RFC 3649). Value `"ack"`.
    Ack,
    /// The stack's `segments_acked`. Value `"segments"`.
    Segments,
}

/// HSTCP parameters. Scenario keys are given per field.
#[derive(Clone, Debug, PartialEq)]
pub struct HighSpeedConfig {
    /// Default [`Aimd::Table`] (Linux). Key `aimd` (`"table"`/`"formula"`).
    pub aimd: Aimd,
    /// Default [`Credit::Ack`] (Linux). Key `credit` (`"ack"`/`"segments"`).
    pub credit: Credit,
}

impl Default for HighSpeedConfig {
    fn default() -> Self {
        Self { aimd: Aimd::Table, credit: Credit::Ack }
    }
}

impl HighSpeedConfig {
    /// Read every supported key; the caller rejects unknown ones afterwards.
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        let aimd = match p.choice("aimd", "table", &["table", "formula"])?.as_str() {
            "formula" => Aimd::Formula,
            _ => Aimd::Table,
        };
        let credit = match p.choice("credit", "ack", &["ack", "segments"])?.as_str() {
            "segments" => Credit::Segments,
            _ => Credit::Ack,
        };
        Ok(Self { aimd, credit })
    }
}

/// The HighSpeed TCP controller ("highspeed", alias "hstcp").
#[derive(Clone, Debug)]
pub struct HighSpeed {
    cfg: HighSpeedConfig,
    /// Linux `ca->ai`: the App. B row, updated in congestion avoidance only.
    row: usize,
    /// Linux `snd_cwnd_cnt`, in units of `a` credits (fractional with the formula).
    cwnd_cnt: f64,
    /// `a(w)` and `b(w)` as last used in congestion avoidance (formula mode).
    a: f64,
    b: f64,
}

impl HighSpeed {
    pub fn new(cfg: HighSpeedConfig) -> Self {
        Self { cfg, row: 0, cwnd_cnt: 0.0, a: 1.0, b: 0.5 }
    }

    pub fn config(&self) -> &HighSpeedConfig {
        &self.cfg
    }

    /// `a(w)` in segments per RTT (per `w` credits) as congestion avoidance last set it.
    pub fn a(&self) -> f64 {
        match self.cfg.aimd {
            Aimd::Table => (self.row + 1) as f64,
            Aimd::Formula => self.a,
        }
    }

    /// `b(w)`, the fraction a congestion event removes, as congestion avoidance last set it.
    pub fn b(&self) -> f64 {
        match self.cfg.aimd {
            Aimd::Table => table_md(self.row) as f64 / 256.0,
            Aimd::Formula => self.b,
        }
    }

    /// Track the window (Linux's row walk in `hstcp_cong_avoid`).
    fn update_aimd(&mut self, w: u64) {
        self.row = table_row(w);
        self.a = rfc_a(w as f64);
        self.b = rfc_b(w as f64);
    }

    fn ssthresh_for(&self, cwnd: u64, mss: u32) -> u64 {
        let w = cwnd / mss as u64;
        let cut = match self.cfg.aimd {
            Aimd::Table => (w * table_md(self.row)) >> 8,
            Aimd::Formula => (w as f64 * self.b).floor() as u64,
        };
        (w - cut).max(MIN_SSTHRESH_SEGMENTS) * mss as u64
    }
}

impl Default for HighSpeed {
    fn default() -> Self {
        Self::new(HighSpeedConfig::default())
    }
}

impl CongestionControl for HighSpeed {
    fn name(&self) -> &'static str {
        "highspeed"
    }

    fn init(&mut self, _st: &mut CcState, _path: &PathInfo) {
        *self = Self::new(self.cfg.clone());
    }

    fn on_ack(&mut self, st: &mut CcState, path: &PathInfo, ack: &AckSample) {
        if !growth_allowed(path, ack) {
            return;
        }
        if st.in_slow_start() {
            // Linux `hstcp_cong_avoid` leaves what slow start did not use unspent.
            slow_start(st, path, ack, ABC_L);
            return;
        }
        let w = whole_segments(st.cwnd, path.mss);
        self.update_aimd(w);
        let credit = match self.cfg.credit {
            Credit::Ack => 1.0,
            Credit::Segments => ack.segments_acked as f64,
        };
        self.cwnd_cnt += self.a() * credit;
        if self.cwnd_cnt >= w as f64 {
            let delta = (self.cwnd_cnt / w as f64).floor();
            self.cwnd_cnt -= delta * w as f64;
            st.cwnd = st.cwnd.saturating_add(delta as u64 * path.mss as u64);
        }
    }

    fn on_congestion(&mut self, st: &mut CcState, path: &PathInfo, ev: &CongestionEvent) -> Reaction {
        self.cwnd_cnt = 0.0;
        match (ev.cause, ev.open_episode) {
            // Linux `tcp_enter_recovery` inside CWR, or a repeated timeout: no new cut.
            (Cause::Loss, Some(Cause::Ecn)) | (Cause::Rto { backoffs: 1.. }, _) => {
                Reaction::Prr { ssthresh: st.ssthresh }
            }
            _ => Reaction::Prr { ssthresh: self.ssthresh_for(st.cwnd, path.mss) },
        }
    }
}

#[cfg(test)]
mod tests;
