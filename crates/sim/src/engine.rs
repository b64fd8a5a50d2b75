//! Discrete-event core: integer-nanosecond time and a priority queue with stable tie-breaking
//! (events at the same instant run in the order they were scheduled), so runs are bit-for-bit
//! reproducible. Events are small `Copy` values; packets never ride in the heap.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

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

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<(Nanos, u64, Event)>>,
    next_seq: u64,
    processed: u64,
}

impl EventQueue {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(n), next_seq: 0, processed: 0 }
    }

    pub fn schedule(&mut self, at: Nanos, ev: Event) {
        self.heap.push(Reverse((at, self.next_seq, ev)));
        self.next_seq += 1;
    }

    pub fn pop(&mut self) -> Option<(Nanos, Event)> {
        let Reverse((t, _, ev)) = self.heap.pop()?;
        self.processed += 1;
        Some((t, ev))
    }

    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.peek().map(|Reverse((t, _, _))| *t)
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
