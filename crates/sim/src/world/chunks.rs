//! Chunk-by-chunk transfers (the fLEDBAT paper's BitTorrent-like peers, §7.1): the next chunk
//! once the last is acknowledged, over the same connection or a fresh one. `ChunkApp`
//! (`traffic/chunks.rs`) decides; this applies its decisions to the flows' endpoints.

use super::*;

impl Simulation<'_> {
    /// A chunked flow whose chunk is fully acknowledged gets its next one after the gap.
    pub(super) fn check_chunk(&mut self, flow: u32) {
        let i = flow as usize;
        // An idle neighbour's connection is finished too, but it has no slot to send in.
        if self.chunk_pending[i] || !self.chunks.is_chunked(flow) || !self.chunks.holds_slot(flow) {
            return;
        }
        if let Endpoints::Tcp { tx, .. } = &self.ends[i] {
            if tx.phase == Phase::Finished {
                self.chunk_pending[i] = true;
                let at = self.chunks.next_due(flow, self.now);
                self.events.schedule(at, Event::Timer { flow, kind: TimerKind::NextChunk });
            }
        }
    }

    pub(super) fn next_chunk(&mut self, flow: u32) {
        self.chunk_pending[flow as usize] = false;
        if self.sc.flows[flow as usize].stop.is_some_and(|stop| self.now >= stop) {
            return;
        }
        let mut out = std::mem::take(&mut self.out);
        let next = match self.chunks.chunk_done(flow, self.now) {
            Next::Same => {
                let bytes = self.chunks.chunk_size(flow);
                if let Endpoints::Tcp { tx, .. } = &mut self.ends[flow as usize] {
                    tx.write(bytes, self.now, &mut out);
                }
                flow
            }
            Next::Fresh(next) => {
                self.reconnect(next);
                self.chunks.opened(next);
                if let Endpoints::Tcp { tx, .. } = &mut self.ends[next as usize] {
                    tx.start(self.now, &mut out);
                }
                next
            }
        };
        self.chunks.started(next, self.now);
        self.inject(next, Side::Sender, &mut out);
        self.out = out;
        self.sync_timers(next);
    }

    /// Replace `flow`'s connection by a fresh one, keeping what the old one counted.
    pub(super) fn reconnect(&mut self, flow: u32) {
        let i = flow as usize;
        let fresh =
            tcp_endpoints(self.sc, flow, &mut self.chunks).expect("controllers were built once already");
        let old = std::mem::replace(&mut self.ends[i], fresh);
        if let Endpoints::Tcp { tx, rx } = &old {
            let c = &mut self.carry[i];
            c.mark.delivered += rx.delivered;
            c.mark.wire_received += rx.wire_bytes_received;
            c.mark.retransmits += tx.stats.retransmits;
            c.timeouts += tx.stats.timeouts;
            c.ecn_reductions += tx.stats.ecn_reductions;
            c.loss_reductions += tx.stats.loss_reductions;
        }
        self.conn[i] = self.conn[i].wrapping_add(1);
    }
}
