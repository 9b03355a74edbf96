//! fairway's side: one [`Engine`] on the loop device (the kernel's
//! scheduler at `none`), every thread a client of it, so fairway's BFQ
//! orders all the workload's I/O and io_uring issues it.

use super::buffers::Buffers;
use super::port::{Op, Port, Ports};
use super::SBenchError;
use fairway_disk::catalogue::DiskSchedSpec;
use fairway_disk::engine::{
    AlignedBuf, ClientId, ClientOptions, Completion, Engine, EngineConfig, EngineError, IoRequest,
    Submission, TargetId, TargetOptions,
};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

type Routes = Arc<Mutex<Vec<Sender<Completion>>>>;

/// The engine and the routes of its completions to the ports.
pub struct EnginePorts {
    engine: Arc<Engine>,
    target: TargetId,
    routes: Routes,
    /// Every buffer's length: the engine's largest request.
    buf_len: usize,
    buffers: Buffers,
}

impl EnginePorts {
    /// An engine scheduling with `scheduler`, `in_flight` transfers at
    /// once, requests of up to `max_request` bytes, submitting as
    /// `submission` says, on the device `dev` (512-byte logical blocks).
    pub fn start(
        dev: &str,
        scheduler: DiskSchedSpec,
        in_flight: u32,
        max_request: u32,
        submission: Submission,
        buffers: Buffers,
    ) -> Result<Self, SBenchError> {
        let routes: Routes = Arc::default();
        let r = routes.clone();
        let config = EngineConfig {
            scheduler,
            max_in_flight: in_flight,
            max_request,
            submission,
            ..EngineConfig::default()
        };
        let engine = Engine::with_callback(config, move |c: Completion| {
            let routes = r.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(tx) = routes.get(c.user_data as usize) {
                let _ = tx.send(c);
            }
        })
        .map_err(|e| match e {
            EngineError::Unavailable(e) => SBenchError::NoUring(e.to_string()),
            e => SBenchError::Engine(e),
        })?;
        let options = TargetOptions {
            direct: true,
            write: true,
            align: 512,
        };
        let target = engine.open(dev, options)?;
        Ok(Self {
            engine: Arc::new(engine),
            target,
            routes,
            buf_len: max_request as usize,
            buffers,
        })
    }

    /// Shuts the engine down once every port is gone.
    pub fn shutdown(self) {
        if let Ok(e) = Arc::try_unwrap(self.engine) {
            e.shutdown();
        }
    }
}

/// One client of the engine.
pub struct EnginePort {
    engine: Arc<Engine>,
    target: TargetId,
    client: ClientId,
    route: u64,
    rx: Receiver<Completion>,
    bufs: Vec<AlignedBuf>,
    buf_len: usize,
    buffers: Buffers,
    pending: usize,
}

impl Ports for EnginePorts {
    type P = EnginePort;
    fn port(&self) -> Result<EnginePort, SBenchError> {
        let client = self.engine.add_client(ClientOptions::weight(1))?;
        let (tx, rx) = channel();
        let mut routes = self.routes.lock().unwrap_or_else(|e| e.into_inner());
        routes.push(tx);
        Ok(EnginePort {
            engine: self.engine.clone(),
            target: self.target,
            client,
            route: routes.len() as u64 - 1,
            rx,
            bufs: Vec::new(),
            buf_len: self.buf_len,
            buffers: self.buffers,
            pending: 0,
        })
    }
}

impl EnginePort {
    fn buf(&mut self) -> Result<AlignedBuf, SBenchError> {
        self.buffers.take(&mut self.bufs, self.buf_len)
    }

    fn submit(&mut self, req: IoRequest) -> Result<(), SBenchError> {
        self.engine
            .submit(req.with_user_data(self.route))
            .map(drop)
            .map_err(|e| SBenchError::Submit(e.kind.to_string()))
    }

    /// Takes one completion: whether it was synchronous.
    fn take(&mut self) -> Result<bool, SBenchError> {
        let c = self
            .rx
            .recv()
            .map_err(|_| SBenchError::Engine(EngineError::Stopped))?;
        let sync = c.sync;
        if !sync {
            self.pending -= 1;
        }
        self.bufs.push(c.buf);
        c.result.map_err(|e| SBenchError::Submit(e.to_string()))?;
        Ok(sync)
    }
}

impl Drop for EnginePort {
    fn drop(&mut self) {
        // Frees the client's slot (replays add clients every repetition).
        let _ = self.engine.remove_client(self.client);
    }
}

impl Port for EnginePort {
    fn sync(&mut self, op: Op, offset: u64, len: u32) -> Result<(), SBenchError> {
        let buf = self.buf()?;
        let req = match op {
            Op::Read => IoRequest::read(self.client, self.target, offset, buf),
            Op::Write => IoRequest::write(self.client, self.target, offset, buf),
        };
        self.submit(req.with_len(len))?;
        while !self.take()? {}
        Ok(())
    }

    fn read_async(&mut self, offset: u64, len: u32) -> Result<(), SBenchError> {
        let buf = self.buf()?;
        let req = IoRequest::read(self.client, self.target, offset, buf);
        self.submit(req.with_len(len).asynchronous())?;
        self.pending += 1;
        Ok(())
    }

    fn drain(&mut self) -> Result<(), SBenchError> {
        while self.pending > 0 {
            self.take()?;
        }
        Ok(())
    }

    fn wait_one(&mut self) -> Result<(), SBenchError> {
        let before = self.pending;
        while self.pending > 0 && self.pending == before {
            self.take()?;
        }
        Ok(())
    }
}
