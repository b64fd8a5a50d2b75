//! quinn's congestion interface over a [`Sender`]: any controller of our registry as a quinn
//! `Controller`, built by a `ControllerFactory` that a connection's `TransportConfig` holds.

use std::any::Any;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use ccbench_cc::{build_controller, Nanos, ParamError, ParamValue, Params};
use quinn::congestion::{Controller, ControllerFactory, ControllerMetrics};
use quinn_proto::RttEstimator;

use crate::sender::{Probe, Sender};

/// Builds one controller per connection (and per path) from a registry name and parameters;
/// every controller it builds publishes its state to one [`Probe`] slot for logs.
pub struct CcFactory {
    name: String,
    /// The parameters as given (`Params` itself records reads and is not shared across threads).
    params: Vec<(String, ParamValue)>,
    probe: Arc<Mutex<Option<Probe>>>,
}

impl CcFactory {
    /// Checks the name and parameters now, so that a bad one is an error before any packet.
    pub fn new(name: &str, params: &Params) -> Result<Self, ParamError> {
        build_controller(name, params)?;
        let params = params.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        Ok(Self { name: name.to_string(), params, probe: Arc::new(Mutex::new(None)) })
    }

    /// The latest state of the controllers this factory built.
    pub fn probe(&self) -> Arc<Mutex<Option<Probe>>> {
        Arc::clone(&self.probe)
    }

    fn sender(&self, mtu: u16) -> Sender {
        let mut params = Params::new();
        for (key, value) in &self.params {
            params.insert(key.as_str(), value.clone());
        }
        let cc = build_controller(&self.name, &params).expect("checked in CcFactory::new");
        Sender::new(cc, mtu)
    }
}

impl ControllerFactory for CcFactory {
    fn build(self: Arc<Self>, now: Instant, current_mtu: u16) -> Box<dyn Controller> {
        let sender = self.sender(current_mtu);
        Box::new(QuicController { sender: Mutex::new(sender), epoch: now, factory: self })
    }
}

/// One connection's controller. The sender sits in a mutex only because quinn reads the window
/// through `&self` while our controllers update on that read (see [`Sender`]); every other call
/// has `&mut self` and takes it without locking.
pub struct QuicController {
    sender: Mutex<Sender>,
    epoch: Instant,
    factory: Arc<CcFactory>,
}

impl QuicController {
    fn nanos(&self, t: Instant) -> Nanos {
        u64::try_from(t.saturating_duration_since(self.epoch).as_nanos()).unwrap_or(u64::MAX)
    }

    fn sender(&mut self) -> &mut Sender {
        self.sender.get_mut().unwrap_or_else(PoisonError::into_inner)
    }

    fn publish(&mut self) {
        let probe = self.sender().probe();
        *self.factory.probe.lock().unwrap_or_else(PoisonError::into_inner) = Some(probe);
    }
}

impl Controller for QuicController {
    fn on_sent(&mut self, now: Instant, bytes: u64, last_packet_number: u64) {
        let now = self.nanos(now);
        self.sender().on_sent(now, bytes, last_packet_number);
    }

    fn on_ack(&mut self, now: Instant, sent: Instant, bytes: u64, app_limited: bool, _rtt: &RttEstimator) {
        let (now, sent) = (self.nanos(now), self.nanos(sent));
        self.sender().on_ack(now, sent, bytes, app_limited);
    }

    fn on_end_acks(&mut self, now: Instant, in_flight: u64, app_limited: bool, _largest: Option<u64>) {
        let now = self.nanos(now);
        self.sender().end_acks(now, in_flight, app_limited);
        self.publish();
    }

    fn on_congestion_event(&mut self, now: Instant, sent: Instant, persistent: bool, lost_bytes: u64) {
        let (now, sent) = (self.nanos(now), self.nanos(sent));
        self.sender().on_congestion(now, sent, persistent, lost_bytes);
        self.publish();
    }

    fn on_mtu_update(&mut self, new_mtu: u16) {
        self.sender().on_mtu_update(new_mtu);
    }

    /// One byte over our cwnd: quinn sends a datagram only while `in_flight + size < window`
    /// (strictly), our stacks while `in_flight + size <= cwnd`. Without it a window of n whole
    /// datagrams carries n − 1, and a controller that caps growth at the flight plus one segment
    /// (LEDBAT, RFC 6817 §2.4.2) never grows.
    fn window(&self) -> u64 {
        let now = self.nanos(Instant::now());
        self.sender.lock().unwrap_or_else(PoisonError::into_inner).window(now) + 1
    }

    fn metrics(&self) -> ControllerMetrics {
        let probe = self.sender.lock().unwrap_or_else(PoisonError::into_inner).probe();
        let mut metrics = ControllerMetrics::default();
        metrics.congestion_window = probe.cwnd;
        metrics.ssthresh = probe.ssthresh;
        metrics.pacing_rate = probe.pacing_rate.map(|bytes_per_s| (bytes_per_s * 8.0) as u64);
        metrics
    }

    /// A fresh controller: ours cannot be copied mid-connection. quinn clones on a path change,
    /// where RFC 9000 §9.4 has the new path start its congestion control afresh anyway.
    fn clone_box(&self) -> Box<dyn Controller> {
        let mtu =
            u16::try_from(self.sender.lock().unwrap_or_else(PoisonError::into_inner).mss()).unwrap_or(1200);
        Box::new(QuicController {
            sender: Mutex::new(self.factory.sender(mtu)),
            epoch: self.epoch,
            factory: Arc::clone(&self.factory),
        })
    }

    fn initial_window(&self) -> u64 {
        self.sender.lock().unwrap_or_else(PoisonError::into_inner).initial_window()
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}
