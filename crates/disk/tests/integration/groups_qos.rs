//! Hierarchical groups and dmClock's reservation and limit in BFQ, against
//! a model: a fake device in simulated time serving one request at a time
//! in `FIXED + len · PER_SECTOR`, and greedy closed-loop clients, each
//! keeping `depth` requests outstanding and issuing the next one the
//! instant one completes. Every target of the scheduler is checked over a
//! long simulated run, and each check is shown to fail on a run where the
//! property must not hold.

use fairway_disk::{
    AppId, AppSpec, Bfq, BfqConfig, DiskScheduler, Dispatch, IoClass, Nanos, Rate, Request, MS,
};
use std::collections::HashMap;

const FIXED: Nanos = 50_000;
const PER_SECTOR: Nanos = 2_000;
const LEN: u32 = 64;
const SEC: Nanos = 1_000 * MS;

/// A greedy client: its spec and how many requests it keeps outstanding
/// (1: synchronous, one at a time; more: asynchronous).
#[derive(Clone, Copy)]
struct Client {
    spec: AppSpec,
    depth: u32,
}

fn sync(spec: AppSpec) -> Client {
    Client { spec, depth: 1 }
}

/// What a run measured.
struct Run {
    /// Requests completed per client.
    done: Vec<u64>,
    /// Sectors completed per client.
    sectors: Vec<u64>,
    /// Every tag issued and how often it completed.
    completions: HashMap<u64, u32>,
    /// Tags handed back by the final drain.
    drained: Vec<u64>,
    /// Simulated time the run lasted.
    elapsed: Nanos,
}

fn bfq() -> Bfq {
    Bfq::new(BfqConfig::simplified(4096).unwrap()).unwrap()
}

/// Declares `groups` (id, parent, weight), admits `clients` as apps
/// 0.., and runs them for `duration` of simulated time.
fn run(groups: &[(u32, u32, u32)], clients: &[Client], duration: Nanos) -> Run {
    run_rated(groups, &[], clients, duration)
}

/// A group's reservation and limit.
type GroupRates = (u32, Option<Rate>, Option<Rate>);

/// As [`run`], with `rates` given to groups before the clients come.
fn run_rated(
    groups: &[(u32, u32, u32)],
    rates: &[GroupRates],
    clients: &[Client],
    duration: Nanos,
) -> Run {
    let mut b = bfq();
    for &(g, p, w) in groups {
        b.add_group(g, p, w).unwrap();
    }
    for &(g, r, l) in rates {
        b.set_group_rates(g, r, l).unwrap();
    }
    for (i, c) in clients.iter().enumerate() {
        b.add_app(AppId(i as u32), c.spec).unwrap();
    }
    simulate(&mut b, clients, duration)
}

fn simulate(b: &mut dyn DiskScheduler, clients: &[Client], duration: Nanos) -> Run {
    let n = clients.len();
    let mut r = Run {
        done: vec![0; n],
        sectors: vec![0; n],
        completions: HashMap::new(),
        drained: Vec::new(),
        elapsed: 0,
    };
    let mut next_tag = 0u64;
    let mut pos = vec![0u64; n];
    let mut issue = |b: &mut dyn DiskScheduler, i: usize, now: Nanos, r: &mut Run| {
        let mut req = Request::read(AppId(i as u32), (i as u64) << 30 | pos[i], LEN);
        if clients[i].depth > 1 {
            req = req.asynchronous();
        }
        req.tag = next_tag;
        r.completions.insert(next_tag, 0);
        next_tag += 1;
        pos[i] += u64::from(LEN);
        b.add_request(now, req).unwrap();
    };
    for (i, c) in clients.iter().enumerate() {
        for _ in 0..c.depth {
            issue(b, i, 0, &mut r);
        }
    }
    let mut now: Nanos = 0;
    while now < duration {
        match b.dispatch(now) {
            Dispatch::Serve(req) => {
                now += FIXED + u64::from(req.len) * PER_SECTOR;
                b.complete(now, &req);
                *r.completions.get_mut(&req.tag).unwrap() += 1;
                let i = req.app.index();
                r.done[i] += 1;
                r.sectors[i] += u64::from(req.len);
                issue(b, i, now, &mut r);
            }
            Dispatch::Idle(Some(t)) => now = t.max(now + 1),
            Dispatch::Idle(None) => panic!("idle until a completion with nothing in service"),
            Dispatch::Empty => panic!("greedy clients always have requests queued"),
        }
    }
    r.elapsed = now;
    r.drained = b.drain().iter().map(|q| q.tag).collect();
    r
}

/// `got` is within 2 % of `want` (relative).
fn within_2pc(got: f64, want: f64) -> Result<(), String> {
    if (got - want).abs() <= 0.02 * want {
        Ok(())
    } else {
        Err(format!("{got:.4} is not within 2 % of {want:.4}"))
    }
}

fn shares(r: &Run) -> Vec<f64> {
    let total: u64 = r.sectors.iter().sum();
    r.sectors.iter().map(|&s| s as f64 / total as f64).collect()
}

/// Every issued request completed exactly once or came back from the
/// final drain exactly once, and nothing else did.
fn exactly_once(r: &Run) -> Result<(), String> {
    let mut seen = r.completions.clone();
    for t in &r.drained {
        *seen.get_mut(t).ok_or(format!("drained unknown tag {t}"))? += 1;
    }
    match seen.iter().find(|(_, &c)| c != 1) {
        Some((t, c)) => Err(format!("request {t} finished {c} times")),
        None => Ok(()),
    }
}

fn rate(r: &Run, i: usize) -> f64 {
    r.done[i] as f64 / (r.elapsed as f64 / SEC as f64)
}

#[test]
fn two_to_one_weights_between_two_greedy_readers() {
    let two = [sync(AppSpec::weight(2)), sync(AppSpec::weight(1))];
    let r = run(&[], &two, 20 * SEC);
    within_2pc(shares(&r)[0], 2.0 / 3.0).unwrap();
    exactly_once(&r).unwrap();
    // The check fails where the weights are equal.
    let r = run(&[], &[two[1], two[1]], 20 * SEC);
    assert!(within_2pc(shares(&r)[0], 2.0 / 3.0).is_err());
}

#[test]
fn two_to_one_weights_between_two_groups() {
    // Group 1 (weight 2) and group 2 (weight 1), each with one reader,
    // then with unequal numbers of readers: the groups' weights decide.
    let g = [(1, 0, 2), (2, 0, 1)];
    let one_each = [
        sync(AppSpec::weight(1).in_group(1)),
        sync(AppSpec::weight(1).in_group(2)),
    ];
    let r = run(&g, &one_each, 20 * SEC);
    within_2pc(shares(&r)[0], 2.0 / 3.0).unwrap();
    let mut three_one = vec![sync(AppSpec::weight(1).in_group(1)); 3];
    three_one.push(sync(AppSpec::weight(1).in_group(2)));
    let r = run(&g, &three_one, 20 * SEC);
    let s = shares(&r);
    within_2pc(s[0] + s[1] + s[2], 2.0 / 3.0).unwrap();
    exactly_once(&r).unwrap();
    // Flat, the same four readers share 3:1 and the check fails.
    let flat = vec![sync(AppSpec::weight(1)); 4];
    let r = run(&[], &flat, 20 * SEC);
    let s = shares(&r);
    assert!(within_2pc(s[0] + s[1] + s[2], 2.0 / 3.0).is_err());
}

#[test]
fn groups_nested_two_levels_share_as_the_weights_say() {
    // root: group 1 (w 3), group 2 (w 1); group 1: app 0 (w 1) and
    // group 3 (w 1); group 3: app 1 (w 2), app 2 (w 1); group 2: app 3.
    let g = [(1, 0, 3), (2, 0, 1), (3, 1, 1)];
    let clients = [
        sync(AppSpec::weight(1).in_group(1)),
        sync(AppSpec::weight(2).in_group(3)),
        sync(AppSpec::weight(1).in_group(3)),
        sync(AppSpec::weight(1).in_group(2)),
    ];
    let want = [3.0 / 8.0, 1.0 / 4.0, 1.0 / 8.0, 1.0 / 4.0];
    let check = |r: &Run| -> Result<(), String> {
        shares(r)
            .iter()
            .zip(want)
            .try_for_each(|(&s, w)| within_2pc(s, w))
    };
    let r = run(&g, &clients, 30 * SEC);
    check(&r).unwrap();
    exactly_once(&r).unwrap();
    // Asynchronous clients (no idling, several queued) share the same way.
    let deep: Vec<Client> = clients.iter().map(|c| Client { depth: 4, ..*c }).collect();
    check(&run(&g, &deep, 30 * SEC)).unwrap();
    // The same clients flat, with the same weights, do not.
    let flat: Vec<Client> = clients
        .iter()
        .map(|c| sync(AppSpec::weight(c.spec.weight)))
        .collect();
    assert!(check(&run(&[], &flat, 30 * SEC)).is_err());
}

#[test]
fn a_reservation_is_met_under_ten_greedy_competitors() {
    // The device serves ~5600 requests/s; a weight-1 client among eleven
    // would get ~510/s. Its reservation of 1500/s is met.
    let mut clients = vec![sync(AppSpec::weight(1)); 10];
    let reserved = AppSpec::weight(1).with_rates(Some(Rate::Iops(1500)), None);
    clients.push(sync(reserved));
    let r = run(&[], &clients, 20 * SEC);
    within_2pc(rate(&r, 10), 1500.0).unwrap();
    exactly_once(&r).unwrap();
    // The ten others share the rest equally.
    let rest: Vec<f64> = (0..10).map(|i| rate(&r, i)).collect();
    let mean = rest.iter().sum::<f64>() / 10.0;
    rest.iter().for_each(|&x| within_2pc(x, mean).unwrap());
    // In a group, and in bytes per second, it is met too.
    let mut grouped = vec![sync(AppSpec::weight(1).in_group(1)); 10];
    let bytes = Rate::BytesPerSec(1500 * u64::from(LEN) * 512);
    grouped.push(sync(
        AppSpec::weight(1).in_group(2).with_rates(Some(bytes), None),
    ));
    let r = run(&[(1, 0, 10), (2, 0, 1)], &grouped, 20 * SEC);
    within_2pc(rate(&r, 10), 1500.0).unwrap();
    // Without the reservation the check fails.
    clients[10] = sync(AppSpec::weight(1));
    let r = run(&[], &clients, 20 * SEC);
    assert!(within_2pc(rate(&r, 10), 1500.0).is_err());
}

#[test]
fn a_limit_is_held_under_overload_and_the_device_waits_for_it() {
    // A heavy client (weight 10) would get ~5100/s next to a weight-1 one.
    let limited = AppSpec::weight(10).with_rates(None, Some(Rate::Iops(1000)));
    let clients = [sync(limited), sync(AppSpec::weight(1))];
    let r = run(&[], &clients, 20 * SEC);
    within_2pc(rate(&r, 0), 1000.0).unwrap();
    exactly_once(&r).unwrap();
    // Alone, asynchronous with 8 queued, it still gets exactly its limit:
    // the scheduler says when to come back, and the device idles until then.
    let alone = [Client {
        spec: limited,
        depth: 8,
    }];
    let r = run(&[], &alone, 20 * SEC);
    within_2pc(rate(&r, 0), 1000.0).unwrap();
    // With a reservation below the limit, the limit still holds.
    let both = AppSpec::weight(10).with_rates(Some(Rate::Iops(500)), Some(Rate::Iops(1000)));
    let r = run(&[], &[sync(both), sync(AppSpec::weight(1))], 20 * SEC);
    within_2pc(rate(&r, 0), 1000.0).unwrap();
    // Without the limit the check fails.
    let r = run(&[], &[sync(AppSpec::weight(10)), clients[1]], 20 * SEC);
    assert!(within_2pc(rate(&r, 0), 1000.0).is_err());
}

#[test]
fn the_exactly_once_check_catches_a_lost_or_doubled_request() {
    let r = run(&[], &[sync(AppSpec::weight(1))], SEC);
    exactly_once(&r).unwrap();
    let mut lost = run(&[], &[sync(AppSpec::weight(1))], SEC);
    lost.drained.clear();
    assert!(exactly_once(&lost).is_err());
    let mut doubled = run(&[], &[sync(AppSpec::weight(1))], SEC);
    let t = doubled.drained[0];
    doubled.drained.push(t);
    assert!(exactly_once(&doubled).is_err());
}

#[test]
fn priority_classes_stay_strict_across_groups() {
    // A real-time client in the light group is served before the heavy
    // group's best-effort clients.
    let g = [(1, 0, 100), (2, 0, 1)];
    let clients = [
        sync(AppSpec::weight(1).in_group(1)),
        sync(AppSpec::weight(1).in_group(1)),
        sync(AppSpec::weight(1).in_group(2).with_class(IoClass::Rt)),
    ];
    let r = run(&g, &clients, 5 * SEC);
    assert!(shares(&r)[2] > 0.99, "{:?}", shares(&r));
    exactly_once(&r).unwrap();
}

#[test]
fn group_and_rate_parameters_are_refused_with_their_names() {
    let mut b = bfq();
    let msg = |e: fairway_disk::DiskConfigError| e.to_string();
    assert_eq!(
        msg(b.add_group(1, 7, 1).unwrap_err()),
        "group 7 is not declared"
    );
    assert!(msg(b.add_group(1, 1, 1).unwrap_err()).contains("own parent"));
    assert!(msg(b.add_group(0, 0, 1).unwrap_err()).starts_with("group = 0"));
    assert!(msg(b.add_group(1025, 0, 1).unwrap_err()).starts_with("group = 1025"));
    assert!(msg(b.add_group(1, 0, 0).unwrap_err()).starts_with("group weight = 0"));
    b.add_group(1, 0, 1).unwrap();
    assert_eq!(
        msg(b.add_group(1, 0, 1).unwrap_err()),
        "group 1 is already declared"
    );
    for g in 2..=8 {
        b.add_group(g, g - 1, 1).unwrap();
    }
    assert!(msg(b.add_group(9, 8, 1).unwrap_err()).starts_with("group depth = 9"));
    let spec = AppSpec::weight(1).in_group(42);
    assert_eq!(
        msg(b.add_app(AppId(0), spec).unwrap_err()),
        "group 42 is not declared"
    );
    let bad = AppSpec::weight(1).with_rates(Some(Rate::Iops(10)), Some(Rate::Iops(5)));
    assert!(msg(b.add_app(AppId(0), bad).unwrap_err()).contains("must not exceed limit"));
    let bad = AppSpec::weight(1).with_rates(None, Some(Rate::Iops(0)));
    assert!(msg(b.add_app(AppId(0), bad).unwrap_err()).starts_with("limit = 0"));
    b.add_app(AppId(0), AppSpec::weight(1).in_group(8)).unwrap();
    assert_eq!(
        msg(b.remove_group(8).unwrap_err()),
        "group 8 still has members"
    );
    b.remove_app(AppId(0)).unwrap();
    b.remove_group(8).unwrap();
    assert!(b.remove_group(0).is_err());
    // The other schedulers refuse groups and rates rather than ignore them.
    let mut c = fairway_disk::catalogue::DiskSchedSpec::parse("c-look")
        .unwrap()
        .build(4)
        .unwrap();
    assert!(c.add_group(1, 0, 1).is_err());
    let rated = AppSpec::weight(1).with_rates(Some(Rate::Iops(10)), None);
    assert!(c.add_app(AppId(0), rated).is_err());
    assert!(c.add_app(AppId(0), AppSpec::weight(1).in_group(1)).is_err());
}

#[test]
fn idling_and_weight_raising_work_inside_a_group() {
    let mut b = bfq();
    b.add_group(1, 0, 1).unwrap();
    b.add_group(2, 1, 1).unwrap();
    b.add_app(AppId(0), AppSpec::weight(1).in_group(2)).unwrap();
    b.add_app(AppId(1), AppSpec::weight(1)).unwrap();
    b.add_request(0, Request::read(AppId(0), 0, 8)).unwrap();
    let Dispatch::Serve(r) = b.dispatch(0) else {
        panic!("not served")
    };
    b.add_request(0, Request::read(AppId(1), 1 << 20, 8))
        .unwrap();
    b.complete(MS, &r);
    // Idles for app 0, two levels down, rather than serving app 1.
    assert_eq!(b.dispatch(MS), Dispatch::Idle(Some(5 * MS)));
    let Dispatch::Serve(r1) = b.dispatch(5 * MS) else {
        panic!("app 1 not served after the idling")
    };
    assert_eq!(r1.app, AppId(1));
    b.complete(6 * MS, &r1);
    // After 2 s of idleness app 0 is raised, inside its group.
    b.add_request(3 * SEC, Request::read(AppId(0), 8, 8))
        .unwrap();
    assert!(b.raised_until(AppId(0)).is_some());
}

#[test]
fn the_number_of_groups_is_bounded_by_their_trees_memory() {
    // With 2^18 possible applications a group's tree has 2^18 + 1025
    // slots: 2^24 slots hold the root's and 62 groups' trees.
    let cfg = BfqConfig {
        max_apps: 1 << 18,
        ..BfqConfig::simplified(4096).unwrap()
    };
    let mut b = Bfq::new(cfg).unwrap();
    for g in 1..=62 {
        b.add_group(g, 0, 1).unwrap();
    }
    let e = b.add_group(63, 0, 1).unwrap_err().to_string();
    assert!(e.starts_with("groups = 63 is out of range"), "{e}");
    assert!(e.contains("a slot per possible member"), "{e}");
}

/// Requests per second completed by clients `ids` together.
fn group_rate(r: &Run, ids: std::ops::Range<usize>) -> f64 {
    ids.map(|i| rate(r, i)).sum()
}

#[test]
fn a_group_reservation_is_met_under_ten_greedy_competitors() {
    // Group 1 (weight 1) holds two readers, one synchronous and one with
    // 4 queued; ten weight-1 readers sit in group 2 (weight 10), so group
    // 1's weighted share is ~510/s of the ~5600/s. Its reservation of
    // 1500/s is met by the pair together.
    let g = [(1, 0, 1), (2, 0, 10)];
    let mut clients = vec![
        sync(AppSpec::weight(1).in_group(1)),
        Client {
            spec: AppSpec::weight(1).in_group(1),
            depth: 4,
        },
    ];
    clients.extend(vec![sync(AppSpec::weight(1).in_group(2)); 10]);
    let reserved = [(1, Some(Rate::Iops(1500)), None)];
    let r = run_rated(&g, &reserved, &clients, 20 * SEC);
    within_2pc(group_rate(&r, 0..2), 1500.0).unwrap();
    exactly_once(&r).unwrap();
    // Both members are served (the reserved service is shared by weight,
    // and the synchronous one cannot always take its turn), and the ten
    // others share the rest equally.
    assert!(rate(&r, 0) > 200.0 && rate(&r, 1) > 200.0, "{:?}", r.done);
    let mean = group_rate(&r, 2..12) / 10.0;
    (2..12).for_each(|i| within_2pc(rate(&r, i), mean).unwrap());
    // In bytes per second it is met too.
    let bytes = Rate::BytesPerSec(1500 * u64::from(LEN) * 512);
    let r = run_rated(&g, &[(1, Some(bytes), None)], &clients, 20 * SEC);
    within_2pc(group_rate(&r, 0..2), 1500.0).unwrap();
    // Without the group's reservation the check fails.
    let r = run(&g, &clients, 20 * SEC);
    assert!(within_2pc(group_rate(&r, 0..2), 1500.0).is_err());
}

/// A group's reservation (1500/s) under ten readers of a heavier group,
/// its members greedy with 4 requests queued each; their rates.
fn reserved_members(groups: &[(u32, u32, u32)], members: &[AppSpec]) -> Vec<f64> {
    let mut g = groups.to_vec();
    g.push((9, 0, 10));
    let mut clients: Vec<Client> = members
        .iter()
        .map(|&spec| Client { spec, depth: 4 })
        .collect();
    clients.extend(vec![sync(AppSpec::weight(1).in_group(9)); 10]);
    let r = run_rated(&g, &[(1, Some(Rate::Iops(1500)), None)], &clients, 20 * SEC);
    exactly_once(&r).unwrap();
    let n = members.len();
    within_2pc(group_rate(&r, 0..n), 1500.0).unwrap();
    (0..n).map(|i| rate(&r, i)).collect()
}

#[test]
fn a_group_reservation_is_shared_among_its_members_by_weight() {
    // The model: a group's members share what it gets, reserved or
    // weighted, as their weights say, level by level.
    let fractions = |rates: Vec<f64>| {
        let total: f64 = rates.iter().sum();
        rates.into_iter().map(|x| x / total).collect::<Vec<_>>()
    };
    // Weights 3:1 in the group: 3/4 and 1/4 of its 1500/s.
    let f = fractions(reserved_members(
        &[(1, 0, 1)],
        &[
            AppSpec::weight(3).in_group(1),
            AppSpec::weight(1).in_group(1),
        ],
    ));
    within_2pc(f[0], 0.75).unwrap();
    within_2pc(f[1], 0.25).unwrap();
    // A member and a child group of the same weight, two readers in the
    // child: 1/2, 1/4, 1/4.
    let f = fractions(reserved_members(
        &[(1, 0, 1), (2, 1, 1)],
        &[
            AppSpec::weight(1).in_group(1),
            AppSpec::weight(1).in_group(2),
            AppSpec::weight(1).in_group(2),
        ],
    ));
    for (got, want) in f.iter().zip([0.5, 0.25, 0.25]) {
        within_2pc(*got, want).unwrap();
    }
    // Equal weights: equal halves, and the check of 3/4 fails there.
    let f = fractions(reserved_members(
        &[(1, 0, 1)],
        &[
            AppSpec::weight(1).in_group(1),
            AppSpec::weight(1).in_group(1),
        ],
    ));
    within_2pc(f[0], 0.5).unwrap();
    assert!(within_2pc(f[0], 0.75).is_err());
}

#[test]
fn a_group_reservation_below_its_share_adds_nothing_to_it() {
    // Group 1 and group 2, weight 1 each, one reader each: group 1's share
    // is half (~2800/s). A reservation of 1000/s is within it: its service
    // in the reservation phase is deducted from its later budgets, so the
    // share stays a half rather than half plus the reservation.
    let g = [(1, 0, 1), (2, 0, 1)];
    let clients = [
        sync(AppSpec::weight(1).in_group(1)),
        sync(AppSpec::weight(1).in_group(2)),
    ];
    let r = run_rated(&g, &[(1, Some(Rate::Iops(1000)), None)], &clients, 20 * SEC);
    within_2pc(shares(&r)[0], 0.5).unwrap();
    // A reservation above the share moves it: the check fails.
    let r = run_rated(&g, &[(1, Some(Rate::Iops(4000)), None)], &clients, 20 * SEC);
    assert!(shares(&r)[0] > 0.6, "{:?}", shares(&r));
}

#[test]
fn a_group_limit_is_held_under_overload_and_the_device_waits_for_it() {
    // Group 1 (weight 10) with two readers would get ~5100/s next to a
    // weight-1 reader; its limit of 1000/s holds for the pair together.
    let g = [(1, 0, 10)];
    let mut clients = vec![sync(AppSpec::weight(1).in_group(1)); 2];
    clients.push(sync(AppSpec::weight(1)));
    let limited = [(1, None, Some(Rate::Iops(1000)))];
    let r = run_rated(&g, &limited, &clients, 20 * SEC);
    within_2pc(group_rate(&r, 0..2), 1000.0).unwrap();
    exactly_once(&r).unwrap();
    // Alone, asynchronous with 8 queued each, the group still gets exactly
    // its limit: the device idles until the tag is reached.
    let alone = vec![
        Client {
            spec: AppSpec::weight(1).in_group(1),
            depth: 8,
        };
        2
    ];
    let r = run_rated(&g, &limited, &alone, 20 * SEC);
    within_2pc(group_rate(&r, 0..2), 1000.0).unwrap();
    // A member's own reservation above the group's limit yields to it.
    let mut greedy = clients.clone();
    greedy[0] = sync(
        AppSpec::weight(1)
            .in_group(1)
            .with_rates(Some(Rate::Iops(3000)), None),
    );
    let r = run_rated(&g, &limited, &greedy, 20 * SEC);
    within_2pc(group_rate(&r, 0..2), 1000.0).unwrap();
    // The limit of a parent group holds its child group's members.
    let nested = [(1, 0, 10), (2, 1, 1)];
    let mut inner = vec![sync(AppSpec::weight(1).in_group(2)); 2];
    inner.push(sync(AppSpec::weight(1)));
    let r = run_rated(&nested, &limited, &inner, 20 * SEC);
    within_2pc(group_rate(&r, 0..2), 1000.0).unwrap();
    // Without the limit the check fails.
    let r = run(&g, &clients, 20 * SEC);
    assert!(within_2pc(group_rate(&r, 0..2), 1000.0).is_err());
}

#[test]
fn group_rates_are_refused_with_their_names() {
    let mut b = bfq();
    let msg = |e: fairway_disk::DiskConfigError| e.to_string();
    let r = Some(Rate::Iops(10));
    assert_eq!(
        msg(b.set_group_rates(3, r, None).unwrap_err()),
        "group 3 is not declared"
    );
    assert!(msg(b.set_group_rates(0, r, None).unwrap_err()).contains("root group"));
    b.add_group(3, 0, 1).unwrap();
    let e = b.set_group_rates(3, Some(Rate::Iops(10)), Some(Rate::Iops(5)));
    assert!(msg(e.unwrap_err()).contains("must not exceed limit"));
    let e = b.set_group_rates(3, None, Some(Rate::Iops(0)));
    assert!(msg(e.unwrap_err()).starts_with("limit = 0"));
    b.set_group_rates(3, r, r).unwrap();
    b.remove_group(3).unwrap();
    let mut c = fairway_disk::catalogue::DiskSchedSpec::parse("c-look")
        .unwrap()
        .build(4)
        .unwrap();
    assert!(msg(c.set_group_rates(1, r, None).unwrap_err()).contains("need the bfq scheduler"));
}
