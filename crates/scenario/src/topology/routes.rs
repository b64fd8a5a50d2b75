//! Routes over a [`Topology`]: fewest hops by breadth-first search, ties broken by link order
//! (so the same file always gives the same route), explicit paths checked hop by hop.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};

use crate::Topology;

/// The fewest-hop route from node `from` to node `to`; among equals, the one whose first
/// differing link comes first in the topology. (One route; [`Router`] for many.)
pub fn shortest_path(topo: &Topology, from: usize, to: usize) -> Option<Vec<usize>> {
    Router::new(topo).shortest_path(from, to)
}

/// How many sources' searches a [`Router`] keeps: flows are usually grouped by source, and a
/// search holds one entry per node, so keeping all of them would grow as nodes².
const SEARCHES_KEPT: usize = 16;

/// Routes for many flows over one topology: each node's outgoing links and each link's other
/// direction found once, names looked up by hash, and a source's breadth-first search kept and
/// resumed by the next flow from it. A scenario of thousands of hosts builds in a fraction of a
/// second instead of scanning every link for every node of every flow.
pub struct Router<'t> {
    topo: &'t Topology,
    /// Per node, its outgoing links in index order (the tie-break).
    out_links: Vec<Vec<usize>>,
    /// Per link, its other direction.
    reverse: Vec<Option<usize>>,
    nodes: HashMap<&'t str, usize>,
    links: HashMap<&'t str, usize>,
    searches: RefCell<VecDeque<Search>>,
}

/// A breadth-first search from `from`, stopped where it last found what it was asked for.
/// Resuming it later gives the same tree as running it to the end at once: a node's first link
/// is final.
struct Search {
    from: usize,
    /// via[n]: the link that first reached node n.
    via: Vec<Option<usize>>,
    seen: Vec<bool>,
    queue: VecDeque<usize>,
}

impl Search {
    fn new(from: usize, nodes: usize) -> Self {
        let mut seen = vec![false; nodes];
        seen[from] = true;
        Search { from, via: vec![None; nodes], seen, queue: VecDeque::from([from]) }
    }

    /// Go on until `to` is reached or nothing is left to reach.
    fn reach(&mut self, to: usize, router: &Router) -> bool {
        while !self.seen[to] {
            let Some(n) = self.queue.pop_front() else { return false };
            for &i in &router.out_links[n] {
                let next = router.topo.links[i].to;
                if !self.seen[next] {
                    self.seen[next] = true;
                    self.via[next] = Some(i);
                    self.queue.push_back(next);
                }
            }
        }
        true
    }
}

impl<'t> Router<'t> {
    pub fn new(topo: &'t Topology) -> Self {
        let mut out_links = vec![Vec::new(); topo.nodes.len()];
        let mut reverse = vec![None; topo.links.len()];
        for (i, l) in topo.links.iter().enumerate() {
            out_links[l.from].push(i);
            if let Some(r) = l.reverse_of {
                reverse[i] = Some(r);
                reverse[r] = reverse[r].or(Some(i));
            }
        }
        // The first of equal names wins, as a scan in order would find it.
        let mut nodes = HashMap::with_capacity(topo.nodes.len());
        for (i, n) in topo.nodes.iter().enumerate().rev() {
            nodes.insert(n.as_str(), i);
        }
        let mut links = HashMap::with_capacity(topo.links.len());
        for (i, l) in topo.links.iter().enumerate().rev() {
            links.insert(l.name.as_str(), i);
        }
        Router { topo, out_links, reverse, nodes, links, searches: RefCell::new(VecDeque::new()) }
    }

    pub fn topology(&self) -> &'t Topology {
        self.topo
    }

    pub fn node(&self, name: &str) -> Option<usize> {
        self.nodes.get(name).copied()
    }

    pub fn link(&self, name: &str) -> Option<usize> {
        self.links.get(name).copied()
    }

    /// As [`shortest_path`].
    pub fn shortest_path(&self, from: usize, to: usize) -> Option<Vec<usize>> {
        let mut searches = self.searches.borrow_mut();
        let at = match searches.iter().position(|s| s.from == from) {
            Some(i) => i,
            None => {
                if searches.len() == SEARCHES_KEPT {
                    searches.pop_front();
                }
                searches.push_back(Search::new(from, self.topo.nodes.len()));
                searches.len() - 1
            }
        };
        let search = &mut searches[at];
        if !search.reach(to, self) {
            return None;
        }
        let mut path = Vec::new();
        let mut n = to;
        while n != from {
            let l = search.via[n]?;
            path.push(l);
            n = self.topo.links[l].from;
        }
        path.reverse();
        Some(path)
    }

    /// `path` walked backwards over each link's other direction, if every link has one.
    pub fn reverse_path(&self, path: &[usize]) -> Option<Vec<usize>> {
        path.iter().rev().map(|&l| self.reverse[l]).collect()
    }
}

/// Check that `path` leads from `from` to `to`, each link starting where the previous ended.
pub fn check_path(topo: &Topology, path: &[usize], from: usize, to: usize) -> Result<(), String> {
    let mut at = from;
    for (i, &l) in path.iter().enumerate() {
        let link = &topo.links[l];
        if path[..i].contains(&l) {
            return Err(format!("link \"{}\" appears twice (a path crosses each link once)", link.name));
        }
        if link.from != at {
            return Err(format!(
                "link \"{}\" starts at \"{}\", but the path is at \"{}\"",
                link.name, topo.nodes[link.from], topo.nodes[at]
            ));
        }
        at = link.to;
    }
    if at != to {
        return Err(format!("the path ends at \"{}\", not at \"{}\"", topo.nodes[at], topo.nodes[to]));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_str;

    fn topo(links: &str) -> Topology {
        let text = format!("duration = \"1s\"\n{links}\n[[flows]]\nfrom = \"a\"\nto = \"b\"\n");
        parse_str(&text, "t", &[], None).unwrap().topology
    }

    fn link(name: &str, from: &str, to: &str, extra: &str) -> String {
        format!("[[links]]\nname = \"{name}\"\nfrom = \"{from}\"\nto = \"{to}\"\nrate = \"1Mbps\"\n{extra}\n")
    }

    fn names(t: &Topology, path: &[usize]) -> Vec<String> {
        path.iter().map(|&l| t.links[l].name.clone()).collect()
    }

    #[test]
    fn fewest_hops_wins_and_ties_go_to_the_earlier_link() {
        let t = topo(
            &[
                link("ac", "a", "c", ""),
                link("cb", "c", "b", ""),
                link("ad", "a", "d", ""),
                link("db", "d", "b", ""),
                link("ab", "a", "b", ""),
            ]
            .concat(),
        );
        let (a, b, c) = (t.node_index("a").unwrap(), t.node_index("b").unwrap(), t.node_index("c").unwrap());
        assert_eq!(names(&t, &shortest_path(&t, a, b).unwrap()), ["ab"]);
        assert_eq!(names(&t, &shortest_path(&t, c, a).unwrap()), ["ac-rev"]);
        // b → a: two two-hop routes back (cb-rev/ac-rev, db-rev/ad-rev) and ab-rev; one hop wins.
        assert_eq!(names(&t, &shortest_path(&t, b, a).unwrap()), ["ab-rev"]);
    }

    #[test]
    fn ties_between_equal_routes_are_stable() {
        let t = topo(
            &[
                link("ac", "a", "c", ""),
                link("cb", "c", "b", ""),
                link("ad", "a", "d", ""),
                link("db", "d", "b", ""),
            ]
            .concat(),
        );
        let (a, b) = (t.node_index("a").unwrap(), t.node_index("b").unwrap());
        assert_eq!(names(&t, &shortest_path(&t, a, b).unwrap()), ["ac", "cb"]);
        assert_eq!(names(&t, &shortest_path(&t, b, a).unwrap()), ["cb-rev", "ac-rev"]);
    }

    #[test]
    fn a_resumed_search_finds_what_a_fresh_one_finds() {
        // A ring of 12 nodes with chords: every pair, asked in an order that makes the router
        // resume searches half done, against a fresh search for each pair.
        let mut links: Vec<String> = (0..12)
            .map(|i| link(&format!("r{i}"), &format!("n{i}"), &format!("n{}", (i + 1) % 12), ""))
            .collect();
        links.extend(
            (0..12)
                .step_by(3)
                .map(|i| link(&format!("c{i}"), &format!("n{i}"), &format!("n{}", (i + 5) % 12), "")),
        );
        links.push(link("ab", "a", "b", "")); // the helper's flow; unreachable from the ring
        let t = topo(&links.concat());
        let router = Router::new(&t);
        for from in 0..t.nodes.len() {
            for to in (0..t.nodes.len()).rev() {
                let fresh = Router::new(&t).shortest_path(from, to);
                assert_eq!(router.shortest_path(from, to), fresh, "{from} → {to}");
            }
        }
    }

    #[test]
    fn one_way_links_have_no_way_back() {
        let t = topo(
            &[link("ab", "a", "b", "bidirectional = false"), link("ba", "b", "a", "bidirectional = false")]
                .concat(),
        );
        let (a, b) = (t.node_index("a").unwrap(), t.node_index("b").unwrap());
        assert_eq!(Router::new(&t).reverse_path(&[0]), None);
        assert_eq!(names(&t, &shortest_path(&t, b, a).unwrap()), ["ba"]);
        assert_eq!(shortest_path(&t, a, a), Some(vec![]));
    }

    #[test]
    fn paths_are_checked_hop_by_hop() {
        let t = topo(&[link("ab", "a", "b", ""), link("bc", "b", "c", "")].concat());
        let (a, b, c) = (t.node_index("a").unwrap(), t.node_index("b").unwrap(), t.node_index("c").unwrap());
        let ab = t.link_index("ab").unwrap();
        let bc = t.link_index("bc").unwrap();
        assert!(check_path(&t, &[ab, bc], a, c).is_ok());
        assert!(check_path(&t, &[bc], a, c).unwrap_err().contains("starts at \"b\""));
        assert!(check_path(&t, &[ab], a, c).unwrap_err().contains("ends at \"b\""));
        let ba = t.link_index("ab-rev").unwrap();
        assert!(check_path(&t, &[ab, ba, ab, bc], a, c).unwrap_err().contains("\"ab\" appears twice"));
        let router = Router::new(&t);
        assert_eq!(names(&t, &router.reverse_path(&[ab, bc]).unwrap()), ["bc-rev", "ab-rev"]);
        assert_eq!(router.reverse_path(&[t.link_index("ab-rev").unwrap()]), Some(vec![ab]));
        let _ = b;
    }
}
