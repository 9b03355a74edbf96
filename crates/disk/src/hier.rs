//! Hierarchical B-WF2Q+: groups of applications sharing the disk by weight,
//! groups inside groups (cgroup `io.weight` semantics, as the kernel's BFQ
//! schedules them).
//!
//! Every group owns a B-WF2Q+ ([`BudgetWf2q`]) over its *members*:
//! applications and child groups, each with its own weight. A group is a
//! member of its parent's tree like an application is, so the root tree
//! shares the disk among its members by weight, and a group's share is
//! shared again among its own members. Choosing the next active
//! application walks down from the root: the member with the smallest
//! eligible finish time is taken in each tree and, if it is a group, its
//! tree is consulted next (the kernel's `bfq_lookup_next_entity` per
//! level). The groups on the path from the root to the active application
//! are *in service*: they leave their parents' trees until the application
//! is deactivated, and are then charged, level by level, the same sectors
//! the application is charged, each at its own weight; a group still
//! backlogged is re-inserted with a back-shifted start, as the
//! application is. Every dispatched sector advances the virtual time of
//! every tree on the application's path.
//!
//! A group's batch is stamped with the budget of the member it would serve
//! first; its actual service is what it is charged, so a group's share of
//! sectors is `w_g / Σ w` of its parent's, whatever its members' budgets.
//!
//! Ids: applications are nodes `0..max_apps`, group `g` (`1..=MAX_GROUPS`;
//! 0 is the root, which has no node) is node `max_apps + g`. A tree keeps a
//! slot per possible node, so trees are allocated only once a group has a
//! member, and [`MAX_TREE_SLOTS`] bounds the total.

use crate::bwf2q::BudgetWf2q;

/// The root group: every application and group without another parent.
pub const ROOT: u32 = 0;
/// Most groups besides the root (ids `1..=MAX_GROUPS`).
pub const MAX_GROUPS: u32 = 1024;
/// Deepest nesting: a group at depth 1 is a child of the root. Each level
/// costs a tree operation per dispatch.
pub const MAX_DEPTH: u32 = 8;
/// Most tree slots over all groups (one per possible member, about 32
/// bytes each, in each of the three priority classes): 2^24 slots.
pub const MAX_TREE_SLOTS: u64 = 1 << 24;

/// The hierarchical budget timestamp engine of one priority class.
pub struct HierWf2q {
    max_apps: u32,
    /// Per group: its tree, once it has had a member.
    trees: Vec<Option<BudgetWf2q>>,
    /// Per node: the group it belongs to.
    parent: Vec<u32>,
    /// Per group: its weight in its parent's tree.
    gweight: Vec<u32>,
    /// Per group: Σ of the weights of the members that count (admitted
    /// applications; child groups with members).
    sums: Vec<u64>,
    /// Per group: members that count.
    members: Vec<u32>,
    /// Per group: on the path of the active application.
    in_service: Vec<bool>,
    /// Per node: the budget its batch was last stamped with.
    budgets: Vec<u32>,
    /// Applications queued in some tree (the active one is not).
    queued_apps: u32,
}

impl HierWf2q {
    /// An engine for application ids `0..max_apps`, with only the root.
    pub fn new(max_apps: u32) -> Self {
        let nodes = (max_apps + MAX_GROUPS + 1) as usize;
        let groups = (MAX_GROUPS + 1) as usize;
        Self {
            max_apps,
            trees: (0..groups).map(|_| None).collect(),
            parent: vec![ROOT; nodes],
            gweight: vec![1; groups],
            sums: vec![0; groups],
            members: vec![0; groups],
            in_service: vec![false; groups],
            budgets: vec![0; nodes],
            queued_apps: 0,
        }
    }

    /// Slots a tree holds (one per possible node).
    pub fn tree_slots(max_apps: u32) -> u64 {
        u64::from(max_apps) + u64::from(MAX_GROUPS) + 1
    }

    fn node(&self, group: u32) -> u32 {
        self.max_apps + group
    }

    fn tree(&mut self, group: u32) -> &mut BudgetWf2q {
        let slots = (self.max_apps + MAX_GROUPS + 1) as usize;
        let t = &mut self.trees[group as usize];
        t.get_or_insert_with(|| BudgetWf2q::new(slots as u32))
    }

    /// Declares group `group` (`1..=MAX_GROUPS`, checked by the caller)
    /// under `parent` with weight `weight`.
    pub fn add_group(&mut self, group: u32, parent: u32, weight: u32) {
        let n = self.node(group) as usize;
        self.parent[n] = parent;
        self.gweight[group as usize] = weight;
        self.sums[group as usize] = 0;
        self.members[group as usize] = 0;
        self.in_service[group as usize] = false;
    }

    /// Forgets an empty group (its tree's memory is released).
    pub fn remove_group(&mut self, group: u32) {
        self.trees[group as usize] = None;
    }

    /// The group a node belongs to.
    pub fn parent_of(&self, app: u32) -> u32 {
        self.parent[app as usize]
    }

    /// A member of weight `w` joins `group`'s count; a group getting its
    /// first member joins its parent's, recursively.
    fn join(&mut self, group: u32, w: u32) {
        let mut g = group;
        let mut w = w;
        loop {
            self.sums[g as usize] += u64::from(w);
            self.members[g as usize] += 1;
            let sum = self.sums[g as usize];
            self.tree(g).set_weight_sum(sum);
            if g == ROOT || self.members[g as usize] > 1 {
                return;
            }
            let node = self.node(g);
            let up = self.parent[node as usize];
            self.tree(up).reset(node);
            w = self.gweight[g as usize];
            g = up;
        }
    }

    /// A member of weight `w` leaves `group`'s count; a group losing its
    /// last member leaves its parent's, recursively.
    fn part(&mut self, group: u32, w: u32) {
        let mut g = group;
        let mut w = w;
        loop {
            self.sums[g as usize] -= u64::from(w);
            self.members[g as usize] -= 1;
            let sum = self.sums[g as usize];
            self.tree(g).set_weight_sum(sum);
            if g == ROOT || self.members[g as usize] > 0 {
                return;
            }
            let node = self.node(g);
            let up = self.parent[node as usize];
            self.tree(up).remove(node);
            w = self.gweight[g as usize];
            g = up;
        }
    }

    /// Admits application `app` of weight `w` into `group`: `S = F = V`
    /// of that group's tree.
    pub fn admit(&mut self, app: u32, group: u32, w: u32) {
        self.parent[app as usize] = group;
        self.tree(group).reset(app);
        self.join(group, w);
    }

    /// Removes application `app` of (current) weight `w`, queued or not
    /// (not the active one).
    pub fn leave(&mut self, app: u32, w: u32) {
        self.remove(app);
        let g = self.parent[app as usize];
        self.part(g, w);
    }

    /// Application `app`'s weight changes from `old` to `new` (raising).
    pub fn reweigh(&mut self, app: u32, old: u32, new: u32) {
        let g = self.parent[app as usize] as usize;
        self.sums[g] = self.sums[g] - u64::from(old) + u64::from(new);
        let sum = self.sums[g];
        self.tree(g as u32).set_weight_sum(sum);
    }

    /// Whether `app` is queued.
    pub fn contains(&mut self, app: u32) -> bool {
        let g = self.parent[app as usize];
        self.tree(g).contains(app)
    }

    /// Files `node` in `group`'s tree: a new arrival (`S = max(V, F)`) or
    /// back-shifted (`S = F`).
    fn file(&mut self, group: u32, node: u32, budget: u32, w: u32, backshift: bool) {
        self.budgets[node as usize] = budget;
        let is_app = node < self.max_apps;
        let t = self.tree(group);
        if is_app && !t.contains(node) {
            self.queued_apps += 1;
        }
        let t = self.tree(group);
        if backshift {
            t.insert_backshifted(node, budget, w);
        } else {
            t.insert_arrival(node, budget, w);
        }
    }

    /// A newly backlogged application (B-WF2Q+'s `S = max(V, F)`); its
    /// groups not yet queued nor in service join their parents' trees the
    /// same way.
    pub fn insert_arrival(&mut self, app: u32, budget: u32, w: u32) {
        let mut g = self.parent[app as usize];
        self.file(g, app, budget, w, false);
        while g != ROOT && !self.in_service[g as usize] {
            let node = self.node(g);
            let up = self.parent[node as usize];
            if self.tree(up).contains(node) {
                return;
            }
            let gw = self.gweight[g as usize];
            self.file(up, node, budget, gw, false);
            g = up;
        }
    }

    /// Deactivation of the active application `app`: it and every group in
    /// service above it are charged `served` sectors at their weights;
    /// `requeue` (its next budget, whether back-shifted) re-inserts it;
    /// a group still backlogged is re-inserted back-shifted (`backshift`
    /// false: at `max(V, F)`, the broken variant of the tests).
    pub fn deactivate(&mut self, app: u32, served: u32, w: u32, requeue: Option<(u32, bool)>) {
        let mut g = self.parent[app as usize];
        self.tree(g).charge(app, served, w);
        let backshift = requeue.is_none_or(|(_, b)| b);
        if let Some((budget, b)) = requeue {
            self.file(g, app, budget, w, b);
        }
        while g != ROOT && self.in_service[g as usize] {
            self.in_service[g as usize] = false;
            let node = self.node(g);
            let up = self.parent[node as usize];
            let gw = self.gweight[g as usize];
            self.tree(up).charge(node, served, gw);
            if let Some(next) = self.tree(g).peek_next() {
                let budget = self.budgets[next as usize];
                self.file(up, node, budget, gw, backshift);
            }
            g = up;
        }
    }

    /// `sectors` dispatched for `app`: every tree on its path advances.
    pub fn add_service(&mut self, app: u32, sectors: u32) {
        let mut g = self.parent[app as usize];
        loop {
            self.tree(g).add_service(sectors);
            if g == ROOT {
                return;
            }
            g = self.parent[self.node(g) as usize];
        }
    }

    /// Removes and returns the next active application, walking down from
    /// the root; the groups passed are in service until it is deactivated.
    pub fn next_application(&mut self) -> Option<u32> {
        let mut g = ROOT;
        loop {
            let n = self.tree(g).next_application()?;
            if n < self.max_apps {
                self.queued_apps -= 1;
                return Some(n);
            }
            g = n - self.max_apps;
            self.in_service[g as usize] = true;
        }
    }

    /// The application [`next_application`](Self::next_application) would
    /// return, everything left queued.
    pub fn peek_next(&mut self) -> Option<u32> {
        self.descend(BudgetWf2q::peek_next)
    }

    /// The application eligible at every level (itself and each group
    /// above it: `S <= V` in its parent's tree) with the smallest F at each,
    /// everything left queued; `None` if the top level has none eligible.
    pub fn peek_eligible(&mut self) -> Option<u32> {
        self.descend(BudgetWf2q::peek_eligible)
    }

    /// From the root down, the node `pick` finds in each tree, until it is
    /// an application; nothing is removed.
    fn descend(&mut self, pick: fn(&mut BudgetWf2q) -> Option<u32>) -> Option<u32> {
        let mut g = ROOT;
        loop {
            let n = pick(self.tree(g))?;
            if n < self.max_apps {
                return Some(n);
            }
            g = n - self.max_apps;
        }
    }

    /// Removes `app` if queued (it is not the active one); groups left
    /// with nothing queued leave their parents' trees, charged nothing.
    pub fn remove(&mut self, app: u32) {
        let mut g = self.parent[app as usize];
        let mut node = app;
        loop {
            let t = self.tree(g);
            if !t.contains(node) {
                return;
            }
            t.remove(node);
            if node == app {
                self.queued_apps -= 1;
            }
            let t = self.tree(g);
            // Charged nothing: `F = S` (the weight does not matter for 0).
            t.charge(node, 0, 1);
            if g == ROOT || self.in_service[g as usize] || !self.tree(g).is_empty() {
                return;
            }
            node = self.node(g);
            g = self.parent[node as usize];
        }
    }

    /// Empties every tree (shutdown).
    pub fn clear(&mut self) {
        let nodes = self.max_apps + MAX_GROUPS + 1;
        for t in self.trees.iter_mut().flatten() {
            for n in 0..nodes {
                t.remove(n);
            }
        }
        self.in_service.iter_mut().for_each(|s| *s = false);
        self.queued_apps = 0;
    }

    /// How many applications are queued (the active one is not).
    pub fn len(&self) -> usize {
        self.queued_apps as usize
    }

    /// Whether no application is queued.
    pub fn is_empty(&self) -> bool {
        self.queued_apps == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Serves `rounds` batches of `budget` sectors from always-backlogged
    /// applications; the sectors each got.
    fn serve(h: &mut HierWf2q, apps: &[(u32, u32)], budget: u32, rounds: usize) -> Vec<u64> {
        let mut got = vec![0u64; apps.len()];
        for &(a, w) in apps {
            h.insert_arrival(a, budget, w);
        }
        for _ in 0..rounds {
            let a = h.next_application().unwrap();
            let (i, &(_, w)) = apps.iter().enumerate().find(|(_, x)| x.0 == a).unwrap();
            h.add_service(a, budget);
            got[i] += u64::from(budget);
            h.deactivate(a, budget, w, Some((budget, true)));
        }
        got
    }

    #[test]
    fn nested_groups_share_by_their_weights() {
        // root: group 1 (w 2) and app 0 (w 1); group 1: app 1 (w 1) and
        // group 2 (w 1); group 2: apps 2 and 3 (w 3 and w 1).
        let mut h = HierWf2q::new(8);
        h.add_group(1, ROOT, 2);
        h.add_group(2, 1, 1);
        h.admit(0, ROOT, 1);
        h.admit(1, 1, 1);
        h.admit(2, 2, 3);
        h.admit(3, 2, 1);
        let got = serve(&mut h, &[(0, 1), (1, 1), (2, 3), (3, 1)], 8, 4800);
        let total: u64 = got.iter().sum();
        let want = [1.0 / 3.0, 1.0 / 3.0, 0.25, 1.0 / 12.0];
        for (g, w) in got.iter().zip(want) {
            let share = *g as f64 / total as f64;
            assert!((share - w).abs() < 0.005, "{got:?}");
        }
    }

    #[test]
    fn an_emptied_group_leaves_its_parent() {
        let mut h = HierWf2q::new(4);
        h.add_group(1, ROOT, 1);
        h.admit(0, 1, 1);
        h.admit(1, ROOT, 1);
        h.insert_arrival(0, 8, 1);
        h.remove(0);
        h.insert_arrival(1, 8, 1);
        assert_eq!(h.next_application(), Some(1));
        assert_eq!(h.next_application(), None);
    }
}
