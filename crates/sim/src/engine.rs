//! Discrete-event core: integer-nanosecond time and a priority queue with stable tie-breaking
//! (events at the same instant run in the order they were scheduled), so runs are bit-for-bit
//! reproducible. Events are small `Copy` values; packets never ride in the heap.

pub type Nanos = u64;

/// A wake-up owned by one flow endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TimerKind {
    /// Flow start (SYN or first data / first datagram).
    Start,
    /// The application stops sending new data.
    Stop,
    Rto,
    /// Pacing release or a controller-owned timer.
    Send,
    DelayedAck,
    /// The receiver's GRO aggregate is complete (`gro`).
    GroFlush,
    /// Receiver-side window controller timer.
    ReceiverCc,
    /// A chunked flow's pause after a chunk is over: write the next one.
    NextChunk,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// The transmitter of a link finished serialising its current packet.
    TxDone(u32),
    /// The packet at the head of a link's propagation pipe reaches the far end.
    Arrive(u32),
    Timer {
        flow: u32,
        kind: TimerKind,
    },
    /// A scheduled change of link parameters (index into the scenario's change list).
    LinkChange(u32),
    /// Time-series bin boundary.
    Sample,
    /// A whole second: the 1 Hz bins of the short-term fairness index.
    Second,
    /// Start of the measurement window.
    WarmupEnd,
}

/// The pending events, a 4-ary min-heap on `(time << 64) | sequence`. Keys are unique, so the
/// order is total and ties at one instant pop in scheduling order. Keys and events live in
/// parallel vectors: a sift compares four children's keys, 64 contiguous bytes, and moves an
/// event only once it has found its place. Half the depth of a binary heap; in a swarm of
/// 1000 connections the heap was the event loop's largest cost.
#[derive(Default)]
pub struct EventQueue {
    keys: Vec<u128>,
    events: Vec<Event>,
    next_seq: u64,
    processed: u64,
}

const ARITY: usize = 4;

impl EventQueue {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue { keys: Vec::with_capacity(n), events: Vec::with_capacity(n), next_seq: 0, processed: 0 }
    }

    pub fn schedule(&mut self, at: Nanos, ev: Event) {
        let key = (at as u128) << 64 | self.next_seq as u128;
        self.next_seq += 1;
        let mut pos = self.keys.len();
        self.keys.push(key);
        self.events.push(ev);
        while pos > 0 {
            let parent = (pos - 1) / ARITY;
            if self.keys[parent] <= key {
                break;
            }
            self.keys[pos] = self.keys[parent];
            self.events[pos] = self.events[parent];
            pos = parent;
        }
        self.keys[pos] = key;
        self.events[pos] = ev;
    }

    pub fn pop(&mut self) -> Option<(Nanos, Event)> {
        let (last_key, last_ev) = (self.keys.pop()?, self.events.pop()?);
        self.processed += 1;
        if self.keys.is_empty() {
            return Some(((last_key >> 64) as Nanos, last_ev));
        }
        let top = ((self.keys[0] >> 64) as Nanos, self.events[0]);
        self.sift_down(last_key, last_ev);
        Some(top)
    }

    /// Fill the hole at the root with `(key, ev)`: move the least child up until `key` fits.
    fn sift_down(&mut self, key: u128, ev: Event) {
        let n = self.keys.len();
        let mut pos = 0;
        loop {
            let first = ARITY * pos + 1;
            if first >= n {
                break;
            }
            let (mut best, mut best_key) = (first, self.keys[first]);
            for child in first + 1..(first + ARITY).min(n) {
                if self.keys[child] < best_key {
                    (best, best_key) = (child, self.keys[child]);
                }
            }
            if key <= best_key {
                break;
            }
            self.keys[pos] = best_key;
            self.events[pos] = self.events[best];
            pos = best;
        }
        self.keys[pos] = key;
        self.events[pos] = ev;
    }

    pub fn peek_time(&self) -> Option<Nanos> {
        self.keys.first().map(|k| (k >> 64) as Nanos)
    }

    /// Events handled so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }
}

/// A restartable timer that schedules lazily: moving the deadline later does not touch the
/// event queue; the early event fires, sees the later deadline and re-arms. This keeps the
/// per-ACK RTO restart free of heap pushes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timer {
    deadline: Option<Nanos>,
    /// Earliest event already in the queue for this timer.
    armed_at: Option<Nanos>,
}

impl Timer {
    pub fn set(&mut self, at: Nanos) {
        self.deadline = Some(at);
    }

    pub fn cancel(&mut self) {
        self.deadline = None;
    }

    pub fn deadline(&self) -> Option<Nanos> {
        self.deadline
    }

    pub fn is_set(&self) -> bool {
        self.deadline.is_some()
    }

    /// An event for this timer fired at `now`: returns true if the timer is due.
    pub fn fire(&mut self, now: Nanos) -> bool {
        if self.armed_at == Some(now) {
            self.armed_at = None;
        }
        match self.deadline {
            Some(d) if d <= now => {
                self.deadline = None;
                true
            }
            _ => false,
        }
    }

    /// The event time to push, if the queue has no event early enough for the deadline.
    pub fn needs_event(&mut self) -> Option<Nanos> {
        let d = self.deadline?;
        match self.armed_at {
            Some(a) if a <= d => None,
            _ => {
                self.armed_at = Some(d);
                Some(d)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_break_in_scheduling_order() {
        let mut q = EventQueue::default();
        q.schedule(5, Event::Sample);
        q.schedule(5, Event::TxDone(1));
        q.schedule(3, Event::TxDone(2));
        q.schedule(5, Event::TxDone(0));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![(3, Event::TxDone(2)), (5, Event::Sample), (5, Event::TxDone(1)), (5, Event::TxDone(0))]
        );
    }

    /// Any interleaving of pushes and pops gives the (time, scheduling order) order: checked
    /// against a sorted list over 20 000 operations with many equal times.
    #[test]
    fn pops_in_time_then_scheduling_order_whatever_the_interleaving() {
        let mut q = EventQueue::default();
        let mut reference: Vec<(Nanos, u64, u32)> = Vec::new();
        let (mut x, mut now, mut seq) = (0x9e37_79b9_7f4a_7c15u64, 0u64, 0u64);
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x % 5 < 3 || reference.is_empty() {
                let at = now + x % 64; // few distinct times: ties are common
                q.schedule(at, Event::Arrive(seq as u32));
                reference.push((at, seq, seq as u32));
                seq += 1;
            } else {
                reference.sort_unstable();
                let (at, _, id) = reference.remove(0);
                assert_eq!(q.pop(), Some((at, Event::Arrive(id))));
                now = at;
            }
            assert_eq!(q.peek_time(), reference.iter().map(|r| r.0).min());
        }
        reference.sort_unstable();
        for (at, _, id) in reference {
            assert_eq!(q.pop(), Some((at, Event::Arrive(id))));
        }
        assert_eq!(q.pop(), None);
        assert_eq!(q.processed(), seq);
    }

    #[test]
    fn lazy_timer_fires_once_at_the_latest_deadline() {
        let mut t = Timer::default();
        t.set(10);
        assert_eq!(t.needs_event(), Some(10));
        t.set(20); // restart later: no new event needed yet
        assert_eq!(t.needs_event(), None);
        assert!(!t.fire(10));
        assert_eq!(t.needs_event(), Some(20));
        assert!(t.fire(20));
        assert_eq!(t.needs_event(), None);
        t.set(30);
        t.cancel();
        assert_eq!(t.needs_event(), None);
    }

    #[test]
    fn earlier_deadline_gets_its_own_event() {
        let mut t = Timer::default();
        t.set(50);
        assert_eq!(t.needs_event(), Some(50));
        t.set(20);
        assert_eq!(t.needs_event(), Some(20));
        assert!(t.fire(20));
        assert!(!t.fire(50));
    }
}
