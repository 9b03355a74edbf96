//! Embedding a scheduler in a small application: two tenants share an
//! uplink 3:1, their packets are real byte buffers, and the scheduler is
//! picked at run time from a spec string (as an operator's configuration
//! file would name it).
//!
//! ```sh
//! cargo run -p fairway-core --example embed            # QFQ
//! cargo run -p fairway-core --example embed -- drr     # any catalogue spec
//! ```
//!
//! The application owns the buffers; the scheduler only decides their
//! order. A full scheduler hands the buffer back, so an overload is a
//! counted drop, never a lost allocation.

use fairway_core::{Capacity, FlowConfig, FlowId, Limits, SchedSpec, Scheduler};

/// The two tenants: flow id, weight, name.
const TENANTS: [(u32, u32, &str); 2] = [(0, 3, "gold"), (1, 1, "bronze")];

fn main() {
    let spec_text = std::env::args().nth(1).unwrap_or_else(|| "qfq".to_string());
    let spec = match SchedSpec::parse(&spec_text) {
        Ok(spec) => spec,
        Err(e) => {
            eprintln!("embed: {e}");
            std::process::exit(2);
        }
    };
    // Room for both tenants and 256 queued packets, allocated once here.
    let mut uplink: Box<dyn Scheduler<Vec<u8>> + Send> =
        spec.build(Capacity::new(2, 256), Limits::DEFAULT);
    for (id, weight, _) in TENANTS {
        if let Err(e) = uplink.add_flow(FlowId(id), FlowConfig::new(weight, 1500)) {
            eprintln!("embed: tenant {id}: {e}");
            std::process::exit(2);
        }
    }

    // Both tenants always have traffic: keep each one's queue topped up and
    // send 4000 packets, counting bytes per tenant and drops.
    let mut sent_bytes = [0u64; 2];
    let mut drops = [0u64; 2];
    let mut next_len = 64usize;
    for _ in 0..4000 {
        for (id, _, _) in TENANTS {
            while uplink.flow_backlog(FlowId(id)).map_or(0, |b| b.packets) < 8 {
                // Packet sizes vary from 64 to 1500 bytes.
                next_len = 64 + (next_len * 7 + 13) % 1437;
                if let Err(refused) = uplink.enqueue(FlowId(id), vec![0u8; next_len]) {
                    drops[id as usize] += 1;
                    drop(refused.packet); // the buffer came back to us
                    break;
                }
            }
        }
        // "Transmit": a real application would hand the buffer to a socket.
        if let Some(out) = uplink.dequeue() {
            sent_bytes[out.flow.0 as usize] += out.packet.len() as u64;
        }
    }

    let total: u64 = sent_bytes.iter().sum();
    println!("scheduler {}: 4000 packets sent", spec_text);
    for (id, weight, name) in TENANTS {
        let share = sent_bytes[id as usize] as f64 / total as f64;
        println!(
            "  {name:6} weight {weight}: {:>8} bytes, {:5.1} % of the uplink (drops {})",
            sent_bytes[id as usize],
            100.0 * share,
            drops[id as usize]
        );
    }
}
