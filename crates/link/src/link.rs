//! A unidirectional link: an egress queue (any [`QueueDisc`]), a transmitter serialising one
//! packet at a time, and a propagation pipe. Optional Bernoulli loss before the queue; the
//! transmitter runs at the link rate, at a per-packet rate drawn from `[rate, rate · spread]`,
//! behind a token bucket, or on a trace's delivery opportunities ([`crate::delivery_trace`]);
//! per-packet jitter that by default never reorders (arrival times are kept non-decreasing, so
//! the pipe stays a FIFO) and with `reorder` is drawn independently per packet (the pipe is kept
//! sorted by arrival time).
//!
//! The link is clock-driven: whoever drives it passes `now` into every call and hears through
//! [`Hooks`] when to call back — the simulator turns the wake-ups into events, the emulator polls
//! [`Link::next_event`]. Nothing here knows about either.
//!
//! **Sending ahead.** When the pipe keeps packets in order and the queue never drops at its head
//! (every queue but CoDel), a packet's arrival at the far end is known the moment its
//! transmission starts, so it enters the pipe then and the transmitter asks for no wake-up of
//! its own: the packet's arrival, no earlier than the end of its transmission, or the next
//! packet offered brings the link up to date ([`Link::run_until`]), each transmission still
//! starting at its scheduled time. One event per packet and hop instead of two. A driver that
//! reads the link's state at `now` calls [`Link::run_until`] first.

use std::collections::VecDeque;
use std::sync::Arc;

use ccbench_aqm::{DequeueSink, DropReason, Enqueued, Nanos, QueueDisc, QueuedPacket};

use crate::delivery_trace::{DeliveryTrace, Opportunities};
use crate::quantiles::Quantiles;
use crate::rng::{unit, SimRng};

/// Counters of one link. Cumulative since time zero; the metrics layer takes differences.
#[derive(Clone, Copy, Debug, Default)]
pub struct LinkCounters {
    pub arrivals: u64,
    pub departures: u64,
    pub bytes_departed: u64,
    pub overflow_drops: u64,
    pub aqm_drops: u64,
    pub ecn_marks: u64,
    pub random_losses: u64,
    /// Nanoseconds the transmitter was engaged (sending, or holding the head for its tokens or
    /// its delivery opportunity), for completed engagements.
    pub busy_ns: u64,
    /// Integral of queue bytes over time (byte·ns) and of queue packets (packet·ns).
    pub queue_byte_ns: u128,
    pub queue_pkt_ns: u128,
}

impl LinkCounters {
    pub fn drops(&self) -> u64 {
        self.overflow_drops + self.aqm_drops
    }

    /// What was counted since `earlier` (a copy of these counters taken then).
    pub fn since(&self, earlier: &LinkCounters) -> LinkCounters {
        LinkCounters {
            arrivals: self.arrivals - earlier.arrivals,
            departures: self.departures - earlier.departures,
            bytes_departed: self.bytes_departed - earlier.bytes_departed,
            overflow_drops: self.overflow_drops - earlier.overflow_drops,
            aqm_drops: self.aqm_drops - earlier.aqm_drops,
            ecn_marks: self.ecn_marks - earlier.ecn_marks,
            random_losses: self.random_losses - earlier.random_losses,
            busy_ns: self.busy_ns - earlier.busy_ns,
            queue_byte_ns: self.queue_byte_ns - earlier.queue_byte_ns,
            queue_pkt_ns: self.queue_pkt_ns - earlier.queue_pkt_ns,
        }
    }
}

/// What a link tells whoever drives it.
pub trait Hooks<P> {
    /// Call [`Link::tx_done`] at `at`: a transmission ends, or a trace-driven link's next delivery
    /// opportunity comes for the packet at the head.
    fn wake_transmitter(&mut self, at: Nanos);
    /// Call [`Link::arrive`] at `at`: a packet reaches the far end then, before any other still
    /// in the pipe.
    fn wake_arrival(&mut self, at: Nanos);
    /// A packet leaves the queue after waiting `sojourn` (links that measure it only).
    fn sojourn(&mut self, _now: Nanos, _pkt: &P, _sojourn: Nanos) {}
    /// A packet is dropped or lost, meeting `queue_delay` of queueing: its sojourn when the AQM
    /// dropped it at the head, else the backlog it met.
    fn loss(&mut self, _now: Nanos, _pkt: &P, _queue_delay: Nanos) {}
}

/// How the transmitter paces packets.
#[derive(Clone, Debug)]
enum Service {
    /// At the link rate, or drawn per packet from `[rate, rate · spread]` with `rng`.
    Rate { spread: Option<(f64, SimRng)> },
    /// A token bucket of `burst` bytes filled at the link rate, serialising at `line_rate`; it
    /// starts full, as Linux `tbf` does. `tokens` at time `at`.
    Bucket { burst: f64, line_rate: f64, tokens: f64, at: Nanos },
    /// On a delivery trace's opportunities.
    Trace(Opportunities),
}

pub struct Link<P> {
    pub name: String,
    /// Bits per second; `f64::INFINITY` means no serialisation and no queue. A trace-driven
    /// link's is its trace's mean rate (for AQMs and reports; the trace paces it).
    rate: f64,
    delay: Nanos,
    jitter: Nanos,
    loss: f64,
    queue: Box<dyn QueueDisc<P>>,
    service: Service,
    /// The packet being sent, if any (when it is not sent ahead).
    transmitting: Option<P>,
    /// The packet being sent, already in the pipe (see "Sending ahead" above).
    ahead: Option<Ahead>,
    /// Whether packets are sent ahead: jitter keeps the pipe in order and the queue never
    /// drops at its head.
    sends_ahead: bool,
    /// Since when the transmitter is engaged, and when it next needs a call ([`Link::tx_done`]).
    engaged: Option<(Nanos, Nanos)>,
    pipe: VecDeque<(Nanos, P)>,
    last_arrival: Nanos,
    last_queue_change: Nanos,
    loss_rng: SimRng,
    jitter_rng: SimRng,
    /// Jitter may reorder packets.
    reorder: bool,
    pub counters: LinkCounters,
    /// Report sojourn times of departing packets.
    pub measure_sojourn: bool,
    /// Backlog (packets) at each AQM congestion signal (mark or AQM drop) from `window_start`
    /// on: the largest queue the AQM let build in a cycle, the `b` of the ABE paper's model (L149).
    pub signal_backlogs: Quantiles,
    /// When the measurement window opens.
    pub window_start: Nanos,
    /// Bytes and packets in the queue, kept here as the queue's outcomes say rather than asked
    /// of the queue (a virtual call) at every step.
    backlog: (u64, usize),
    /// The least backlog (bytes, packets) since [`Link::reset_min_backlog`].
    min_backlog: (u64, usize),
}

/// What the link remembers of a packet sent ahead while it is being serialised: its size, to
/// count its departure when it is out, and its jitter draw and the arrival it may not precede,
/// to place it afresh if the delay changes meanwhile.
#[derive(Clone, Copy, Debug)]
struct Ahead {
    bytes: u32,
    jitter: Nanos,
    floor: Nanos,
}

/// Counts what an AQM discards or marks while dequeuing, and tells the hooks of each loss.
struct DequeueCounter<'a, H> {
    counters: &'a mut LinkCounters,
    backlog: &'a mut (u64, usize),
    hooks: &'a mut H,
    now: Nanos,
}

impl<P: QueuedPacket, H: Hooks<P>> DequeueSink<P> for DequeueCounter<'_, H> {
    fn dropped(&mut self, pkt: P, reason: DropReason, sojourn: Nanos) {
        count_drop(self.counters, reason);
        leave(self.backlog, &pkt);
        self.hooks.loss(self.now, &pkt, sojourn);
    }
    fn marked(&mut self, _pkt: &P, _sojourn: Nanos) {
        self.counters.ecn_marks += 1;
    }
}

/// `pkt` left the queue (sent or dropped).
fn leave<P: QueuedPacket>(backlog: &mut (u64, usize), pkt: &P) {
    backlog.0 -= pkt.wire_bytes() as u64;
    backlog.1 -= 1;
}

fn count_drop(counters: &mut LinkCounters, reason: DropReason) {
    match reason {
        DropReason::Overflow => counters.overflow_drops += 1,
        DropReason::Aqm => counters.aqm_drops += 1,
    }
}

impl<P: QueuedPacket> Link<P> {
    pub fn new(
        name: String,
        rate: f64,
        delay: Nanos,
        jitter: Nanos,
        loss: f64,
        mut queue: Box<dyn QueueDisc<P>>,
        (loss_rng, jitter_rng): (SimRng, SimRng),
    ) -> Self {
        queue.set_link_rate(rate);
        let sends_ahead = !queue.drops_at_dequeue();
        Link {
            name,
            rate,
            delay,
            jitter,
            loss,
            queue,
            service: Service::Rate { spread: None },
            transmitting: None,
            ahead: None,
            sends_ahead,
            engaged: None,
            pipe: VecDeque::with_capacity(if rate.is_finite() { 256 } else { 8 }),
            last_arrival: 0,
            last_queue_change: 0,
            loss_rng,
            jitter_rng,
            reorder: false,
            counters: LinkCounters::default(),
            measure_sojourn: false,
            signal_backlogs: Quantiles::default(),
            window_start: 0,
            backlog: (0, 0),
            min_backlog: (0, 0),
        }
    }

    /// Draw each packet's service rate uniformly from `[rate, rate · spread]` (`spread` > 1),
    /// from `rng`; rate changes keep the spread.
    pub fn set_rate_spread(&mut self, spread: f64, rng: SimRng) {
        self.service = Service::Rate { spread: Some((spread, rng)) };
    }

    /// Shape with a token bucket of `burst` bytes filled at the link's rate, serialising at
    /// `line_rate`; it starts full, as Linux `tbf` does.
    pub fn set_token_bucket(&mut self, burst: u64, line_rate: f64) {
        let burst = burst as f64;
        self.service = Service::Bucket { burst, line_rate, tokens: burst, at: 0 };
    }

    /// Deliver on `trace`'s opportunities; the link's rate becomes the trace's mean rate.
    pub fn set_delivery_trace(&mut self, trace: Arc<DeliveryTrace>) {
        self.set_rate(trace.mean_rate());
        self.service = Service::Trace(Opportunities::new(trace));
    }

    /// Let jitter reorder packets: each packet's extra delay is drawn independently.
    pub fn set_reorder(&mut self, reorder: bool) {
        self.reorder = reorder;
        // A reordering pipe may deliver a later packet first: the transmitter keeps its wake-ups.
        self.sends_ahead &= !reorder;
    }

    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// New rate for transmissions that start from now on.
    pub fn set_rate(&mut self, rate: f64) {
        self.rate = rate;
        self.queue.set_link_rate(rate);
    }

    /// New propagation delay for packets whose transmission ends from now on (a packet sent
    /// ahead and still being serialised is placed afresh).
    pub fn set_delay<H: Hooks<P>>(&mut self, delay: Nanos, hooks: &mut H) {
        self.delay = delay;
        let (Some(a), Some((_, done))) = (self.ahead, self.engaged) else { return };
        let at = (done + delay + a.jitter).max(a.floor);
        let only = self.pipe.len() == 1;
        if let Some(last) = self.pipe.back_mut() {
            if last.0 != at && only {
                hooks.wake_arrival(at);
            }
            last.0 = at;
        }
        self.last_arrival = at;
    }

    /// The least backlog (bytes, packets) since the last [`Link::reset_min_backlog`].
    pub fn min_backlog(&self) -> (u64, usize) {
        self.min_backlog
    }

    /// Start tracking the least backlog afresh from the current one (at the warm-up's end).
    pub fn reset_min_backlog(&mut self) {
        self.min_backlog = self.backlog;
    }

    fn note_backlog(&mut self) {
        let (b, p) = self.backlog;
        self.min_backlog = (self.min_backlog.0.min(b), self.min_backlog.1.min(p));
    }

    /// How long the current backlog takes to serialise at the nominal rate.
    fn backlog_delay(&self) -> Nanos {
        if self.rate.is_finite() {
            (self.backlog.0 as f64 * 8e9 / self.rate) as Nanos
        } else {
            0
        }
    }

    /// The queue's drop/mark probability now, if it has one.
    pub fn signal_probability(&mut self, now: Nanos) -> Option<f64> {
        self.queue.signal_probability(now)
    }

    fn aqm_signals(&self) -> u64 {
        self.counters.ecn_marks + self.counters.aqm_drops
    }

    fn note_signal_backlog(&mut self, signals_before: u64, now: Nanos) {
        if self.aqm_signals() > signals_before && now >= self.window_start {
            self.signal_backlogs.record(self.backlog.1 as u64);
        }
    }

    /// Packets held anywhere on the link (queue, transmitter, pipe), for conservation checks.
    pub fn packets_held(&self) -> usize {
        // A packet sent ahead is counted in the pipe.
        self.backlog.1 + self.transmitting.is_some() as usize + self.pipe.len()
    }

    /// Whether the backlog the link keeps is the queue's own (an invariant the simulator checks).
    pub fn check_backlog(&self) -> Result<(), String> {
        let queue = (self.queue.len_bytes(), self.queue.len_packets());
        if self.backlog == queue {
            Ok(())
        } else {
            Err(format!("link {}: backlog kept {:?} but the queue holds {queue:?}", self.name, self.backlog))
        }
    }

    /// Time the transmitter was engaged up to `now`, including an engagement in progress.
    pub fn busy_until(&self, now: Nanos) -> u64 {
        let partial = self.engaged.map_or(0, |(since, _)| now.saturating_sub(since));
        self.counters.busy_ns + partial
    }

    /// Queue integrals (byte·ns, packet·ns) up to `now`.
    pub fn queue_integrals(&self, now: Nanos) -> (u128, u128) {
        let dt = now.saturating_sub(self.last_queue_change) as u128;
        (
            self.counters.queue_byte_ns + self.backlog.0 as u128 * dt,
            self.counters.queue_pkt_ns + self.backlog.1 as u128 * dt,
        )
    }

    fn account_queue(&mut self, now: Nanos) {
        let (b, p) = self.queue_integrals(now);
        self.counters.queue_byte_ns = b;
        self.counters.queue_pkt_ns = p;
        self.last_queue_change = now;
    }

    /// The earliest time something happens on the link by itself — the transmitter needs a call
    /// or a packet reaches the far end — for drivers that poll a clock.
    pub fn next_event(&self) -> Option<Nanos> {
        let tx = self.engaged.map(|(_, wake)| wake);
        let arrive = self.pipe.front().map(|p| p.0);
        [tx, arrive].into_iter().flatten().min()
    }

    /// Run the transmitter up to `now`, each call at its own scheduled time, and move every
    /// packet that has reached the far end into `out` with its arrival time: the whole link for
    /// a driver that polls a clock (calls at `now` earlier than the last are treated as it).
    pub fn advance<H: Hooks<P>>(&mut self, now: Nanos, hooks: &mut H, out: &mut Vec<(Nanos, P)>) {
        self.run_until(now, hooks);
        while self.pipe.front().is_some_and(|p| p.0 <= now) {
            out.extend(self.pipe.pop_front());
        }
    }

    /// Run the transmitter up to and including `now`, each transmission ending and the next
    /// starting at its own scheduled time. [`Link::offer`] and [`Link::arrive`] do this
    /// themselves; the simulator's transmitter wake-up is this call.
    pub fn run_until<H: Hooks<P>>(&mut self, now: Nanos, hooks: &mut H) {
        while let Some((_, wake)) = self.engaged.filter(|&(_, wake)| wake <= now) {
            self.tx_done(wake, hooks);
        }
    }

    /// Bytes and packets waiting in the queue.
    pub fn backlog(&self) -> (u64, usize) {
        self.backlog
    }

    /// A packet arrives at the link's ingress.
    pub fn offer<H: Hooks<P>>(&mut self, pkt: P, now: Nanos, hooks: &mut H) {
        // A packet offered at the very instant a transmission ends is queued first, as when the
        // transmitter's end was an event of its own scheduled after the offer's cause.
        self.run_until(now.saturating_sub(1), hooks);
        self.counters.arrivals += 1;
        if self.loss > 0.0 && unit(&mut self.loss_rng) < self.loss {
            self.counters.random_losses += 1;
            hooks.loss(now, &pkt, self.backlog_delay());
            return;
        }
        if self.rate.is_infinite() {
            self.counters.departures += 1;
            self.counters.bytes_departed += pkt.wire_bytes() as u64;
            self.propagate(pkt, now, hooks);
            return;
        }
        self.account_queue(now);
        let signals = self.aqm_signals();
        self.backlog.0 += pkt.wire_bytes() as u64;
        self.backlog.1 += 1;
        match self.queue.enqueue(pkt, now) {
            Enqueued::Queued => {}
            Enqueued::Marked => self.counters.ecn_marks += 1,
            Enqueued::Dropped(p, reason) => {
                // Not necessarily the packet offered: a queue may drop another to make room.
                leave(&mut self.backlog, &p);
                count_drop(&mut self.counters, reason);
                hooks.loss(now, &p, self.backlog_delay());
                while let Some(p) = self.queue.take_extra_drop() {
                    leave(&mut self.backlog, &p);
                    count_drop(&mut self.counters, reason);
                    hooks.loss(now, &p, self.backlog_delay());
                }
            }
        }
        self.note_signal_backlog(signals, now);
        if self.engaged.is_none() {
            self.start_next(now, hooks);
        }
    }

    /// The transmitter's scheduled call: the packet being sent is out (it enters the pipe,
    /// unless it was sent ahead), and the next one starts.
    fn tx_done<H: Hooks<P>>(&mut self, now: Nanos, hooks: &mut H) {
        let Some((since, _)) = self.engaged.take() else { return };
        self.counters.busy_ns += now - since;
        if let Some(pkt) = self.transmitting.take() {
            self.count_departure(pkt.wire_bytes());
            self.propagate(pkt, now, hooks);
        } else if let Some(a) = self.ahead.take() {
            self.count_departure(a.bytes);
        }
        self.start_next(now, hooks);
    }

    fn count_departure(&mut self, bytes: u32) {
        self.counters.departures += 1;
        self.counters.bytes_departed += bytes as u64;
    }

    fn start_next<H: Hooks<P>>(&mut self, now: Nanos, hooks: &mut H) {
        if let Service::Trace(o) = &self.service {
            let (_, at, _) = o.available(now);
            if at > now && self.backlog.1 > 0 {
                // The head waits in the queue for the next opportunity, as in mahimahi.
                self.engaged = Some((now, at));
                hooks.wake_transmitter(at);
                return;
            }
        }
        self.account_queue(now);
        let signals = self.aqm_signals();
        let backlog = &mut self.backlog;
        let mut sink = DequeueCounter { counters: &mut self.counters, backlog, hooks: &mut *hooks, now };
        let next = self.queue.dequeue(now, &mut sink);
        if let Some(d) = &next {
            leave(&mut self.backlog, &d.pkt);
        }
        self.note_signal_backlog(signals, now);
        self.note_backlog();
        if let Some(d) = next {
            let bytes = d.pkt.wire_bytes();
            // Behind a token bucket the head waits for its tokens: that wait is queueing too.
            let wait = self.await_tokens(now, bytes);
            if self.measure_sojourn {
                hooks.sojourn(now + wait, &d.pkt, d.sojourn + wait);
            }
            let done = self.send(now + wait, bytes);
            self.engaged = Some((now, done));
            if self.sends_ahead {
                let (jitter, floor) = (self.draw_jitter(), self.last_arrival);
                self.enter_pipe(d.pkt, (done + self.delay + jitter).max(floor), hooks);
                self.ahead = Some(Ahead { bytes, jitter, floor });
            } else {
                self.transmitting = Some(d.pkt);
                hooks.wake_transmitter(done);
            }
        }
    }

    /// When a packet of `bytes` that starts at `now` is out.
    fn send(&mut self, now: Nanos, bytes: u32) -> Nanos {
        let rate = match &mut self.service {
            Service::Rate { spread: None } => self.rate,
            Service::Rate { spread: Some((spread, rng)) } => self.rate * (1.0 + unit(rng) * (*spread - 1.0)),
            Service::Bucket { line_rate, .. } => *line_rate,
            Service::Trace(o) => return o.send(now, bytes),
        };
        now + ((bytes as f64 * 8e9) / rate).ceil() as Nanos
    }

    /// How long a packet of `bytes` waits for its tokens from `now`, taking them. The bucket
    /// never holds more than `burst`, nor less than one packet's worth in capacity (a larger
    /// packet waits for its full size rather than forever).
    fn await_tokens(&mut self, now: Nanos, bytes: u32) -> Nanos {
        let per_ns = self.rate / 8e9;
        let Service::Bucket { burst, tokens, at, .. } = &mut self.service else {
            return 0;
        };
        let size = bytes as f64;
        let have = (*tokens + now.saturating_sub(*at) as f64 * per_ns).min(burst.max(size));
        let wait = if have >= size { 0 } else { ((size - have) / per_ns).ceil() as Nanos };
        *tokens = (have + wait as f64 * per_ns - size).max(0.0);
        *at = now + wait;
        wait
    }

    fn draw_jitter(&mut self) -> Nanos {
        if self.jitter > 0 {
            (unit(&mut self.jitter_rng) * self.jitter as f64) as Nanos
        } else {
            0
        }
    }

    fn propagate<H: Hooks<P>>(&mut self, pkt: P, now: Nanos, hooks: &mut H) {
        let extra = self.draw_jitter();
        if self.reorder {
            return self.propagate_reordering(pkt, now + self.delay + extra, hooks);
        }
        self.enter_pipe(pkt, (now + self.delay + extra).max(self.last_arrival), hooks);
    }

    /// Append to the in-order pipe, arriving `at` (never before the packet ahead of it).
    fn enter_pipe<H: Hooks<P>>(&mut self, pkt: P, at: Nanos, hooks: &mut H) {
        self.last_arrival = at;
        if self.pipe.is_empty() {
            hooks.wake_arrival(at);
        }
        self.pipe.push_back((at, pkt));
    }

    /// Insert by arrival time (after packets due at the same time, so ties stay FIFO); a new
    /// head needs a wake-up of its own, the one already asked for then finds nothing due.
    fn propagate_reordering<H: Hooks<P>>(&mut self, pkt: P, at: Nanos, hooks: &mut H) {
        let i = self.pipe.partition_point(|&(t, _)| t <= at);
        if i == 0 {
            hooks.wake_arrival(at);
        }
        self.pipe.insert(i, (at, pkt));
    }

    /// The head of the pipe reaches the far end; returns it (None for a wake-up whose packet an
    /// earlier one already delivered, which happens only with reordering).
    pub fn arrive<H: Hooks<P>>(&mut self, now: Nanos, hooks: &mut H) -> Option<P> {
        self.run_until(now, hooks);
        match self.pipe.front() {
            Some(&(at, _)) if at <= now => {}
            _ => return None,
        }
        let (_, pkt) = self.pipe.pop_front()?;
        if let Some(&(next, _)) = self.pipe.front() {
            hooks.wake_arrival(next);
        }
        Some(pkt)
    }
}

#[cfg(test)]
#[path = "link_tests.rs"]
mod tests;
