//! BFQ beyond the thesis, as the kernel's BFQ does it: no idling after
//! asynchronous requests, and low-latency weight raising.

use fairway_disk::{AppId, AppSpec, Bfq, BfqConfig, DiskScheduler, Dispatch, Request, MS};

fn bfq() -> Bfq {
    let cfg = BfqConfig::simplified(4096).unwrap();
    let mut b = Bfq::new(cfg).unwrap();
    for a in 0..4 {
        b.add_app(AppId(a), AppSpec::weight(1)).unwrap();
    }
    b
}

/// App 0's only request is served; then app 1 issues. After a synchronous
/// request BFQ idles for app 0 (app 1 waits); after an asynchronous one it
/// serves app 1 at once, and app 0's completion later changes nothing.
#[test]
fn bfq_idles_after_sync_requests_only() {
    for sync in [true, false] {
        let mut b = bfq();
        let r = Request::read(AppId(0), 0, 8);
        let r = if sync { r } else { r.asynchronous() };
        b.add_request(0, r).unwrap();
        let Dispatch::Serve(served) = b.dispatch(0) else {
            panic!("app 0 not served")
        };
        b.add_request(MS, Request::read(AppId(1), 1 << 20, 8))
            .unwrap();
        let next = b.dispatch(MS);
        if sync {
            assert_eq!(next, Dispatch::Idle(None), "sync: idles for app 0");
            b.complete(2 * MS, &served);
            assert_eq!(b.dispatch(2 * MS), Dispatch::Idle(Some(6 * MS)));
            assert_eq!(b.stats().async_expired, 0);
        } else {
            let Dispatch::Serve(r1) = next else {
                panic!("async: app 1 not served at once: {next:?}")
            };
            assert_eq!(r1.app, AppId(1));
            b.complete(2 * MS, &served);
            assert_eq!(b.stats().async_expired, 1);
            assert_eq!(b.stats().idle_expired, 0);
        }
    }
}
