//! When BFQ idles for an application whose queue has just emptied on a
//! synchronous request, checked against a model of the rule (the kernel
//! BFQ's `bfq_better_to_idle`, as `Bfq::worth_idling` documents it) in
//! every combination of: non-rotational device or not, the application
//! seeky or sequential, its weight raised or not, another application
//! waiting or not, and that one raised or not.

use fairway_disk::{AppId, AppSpec, Bfq, BfqConfig, DiskScheduler, Dispatch, Request, MS};

/// App A (0) and app B (1) of one scenario.
#[derive(Clone, Copy, Debug)]
struct Case {
    nonrot: bool,
    a_seeky: bool,
    a_raised: bool,
    b_waiting: bool,
    b_raised: bool,
}

/// The rule, written from its statement: idle when nobody else waits;
/// for a raised application, when the one waiting is not raised; for
/// another, only where idling gains throughput (not for a seeky
/// application on a non-rotational device) and no raised one waits.
fn model_idles(c: Case) -> bool {
    let gains_throughput = !(c.nonrot && c.a_seeky);
    if !c.b_waiting {
        true
    } else if c.a_raised {
        !c.b_raised
    } else {
        gains_throughput && !c.b_raised
    }
}

fn serve(b: &mut Bfq, t: u64) -> Request {
    match b.dispatch(t) {
        Dispatch::Serve(r) => r,
        d => panic!("nothing served at {t}: {d:?}"),
    }
}

/// Builds the scenario; whether BFQ idles once A's last request is out.
fn bfq_idles(c: Case) -> bool {
    let mut b = Bfq::new(BfqConfig::simplified(4096).unwrap()).unwrap();
    b.set_nonrotational(c.nonrot);
    for app in [0, 1] {
        b.add_app(AppId(app), AppSpec::weight(1)).unwrap();
    }
    // To be raised, B serves one request first, done at 1 ms (its next,
    // 3 s later, comes after 2 s of idleness); without a completion B's
    // first request is never raised.
    if c.b_raised {
        b.add_request(0, Request::read(AppId(1), 1 << 30, 8))
            .unwrap();
        let r = serve(&mut b, 0);
        b.complete(MS, &r);
    }
    // A's history: 8 synchronous reads, each far from the previous one
    // (seeky) or right after it, each issued 0.1 ms after the previous
    // one's completion (within T_wait: A stays active).
    let sector = |k: u64| if c.a_seeky { k << 20 } else { k * 8 };
    // After B's idling (T_wait = 4 ms from its completion) has run out.
    let mut t = 6 * MS;
    for k in 0..8 {
        b.add_request(t, Request::read(AppId(0), sector(k), 8))
            .unwrap();
        let r = serve(&mut b, t);
        assert_eq!(r.app, AppId(0), "{c:?}");
        t += MS;
        b.complete(t, &r);
        t += MS / 10;
    }
    let wait = 3_000 * MS;
    if c.a_raised {
        // A idles for 3 s: its idling expires and its next read is raised.
        t += wait;
        assert!(matches!(b.dispatch(t), Dispatch::Empty), "{c:?}");
    }
    // A's last two reads; the first makes A the active application.
    for k in [8, 9] {
        b.add_request(t, Request::read(AppId(0), sector(k), 8))
            .unwrap();
    }
    let r = serve(&mut b, t);
    assert_eq!(r.app, AppId(0), "{c:?}");
    if c.b_raised && !c.a_raised {
        t += wait;
    }
    if c.b_waiting {
        b.add_request(t, Request::read(AppId(1), 1 << 31, 8))
            .unwrap();
    }
    assert_eq!(b.raised_until(AppId(0)).is_some(), c.a_raised, "{c:?}");
    assert_eq!(b.raised_until(AppId(1)).is_some(), c.b_raised, "{c:?}");
    let r = serve(&mut b, t);
    if c.b_waiting && c.b_raised && !c.a_raised {
        // B's raised arrival ended A's turn (preemption): B is served at
        // once, before A's queued read, so nothing idles for A.
        assert_eq!(r.app, AppId(1), "{c:?}");
        return false;
    }
    assert_eq!(r.app, AppId(0), "{c:?}");
    match b.dispatch(t) {
        Dispatch::Idle(_) => true,
        Dispatch::Serve(r) => {
            assert_eq!(r.app, AppId(1), "{c:?}");
            false
        }
        Dispatch::Empty => false,
    }
}

#[test]
fn bfq_idles_as_the_rule_says() {
    let mut checked = 0;
    for bits in 0..32u32 {
        let bit = |i: u32| bits & (1 << i) != 0;
        let c = Case {
            nonrot: bit(0),
            a_seeky: bit(1),
            a_raised: bit(2),
            b_waiting: bit(3),
            b_raised: bit(4),
        };
        if c.b_raised && !c.b_waiting {
            continue;
        }
        assert_eq!(bfq_idles(c), model_idles(c), "{c:?}");
        checked += 1;
    }
    assert_eq!(checked, 24);
}

/// The case the rule is for: two seeky readers on flash. BFQ serves the
/// second as soon as the first's request is out, where on a rotating disk
/// it keeps the device idle for the first.
#[test]
fn seeky_readers_on_flash_are_not_idled_for() {
    let c = Case {
        nonrot: true,
        a_seeky: true,
        a_raised: false,
        b_waiting: true,
        b_raised: false,
    };
    assert!(!bfq_idles(c));
    assert!(bfq_idles(Case { nonrot: false, ..c }));
    assert!(bfq_idles(Case {
        a_seeky: false,
        ..c
    }));
}
