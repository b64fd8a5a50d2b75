//! Routes over a [`Topology`]: fewest hops by breadth-first search, ties broken by link order
//! (so the same file always gives the same route), explicit paths checked hop by hop.

use std::collections::VecDeque;

use crate::Topology;

/// The fewest-hop route from node `from` to node `to`; among equals, the one whose first
/// differing link comes first in the topology.
pub fn shortest_path(topo: &Topology, from: usize, to: usize) -> Option<Vec<usize>> {
    // via[n] = the link that first reached node n; links are scanned in index order.
    let mut via: Vec<Option<usize>> = vec![None; topo.nodes.len()];
    let mut seen = vec![false; topo.nodes.len()];
    let mut queue = VecDeque::from([from]);
    seen[from] = true;
    while let Some(n) = queue.pop_front() {
        if n == to {
            break;
        }
        for (i, l) in topo.links.iter().enumerate() {
            if l.from == n && !seen[l.to] {
                seen[l.to] = true;
                via[l.to] = Some(i);
                queue.push_back(l.to);
            }
        }
    }
    if !seen[to] {
        return None;
    }
    let mut path = Vec::new();
    let mut n = to;
    while n != from {
        let l = via[n]?;
        path.push(l);
        n = topo.links[l].from;
    }
    path.reverse();
    Some(path)
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

/// The other direction of link `l`, if it is half of a bidirectional link.
pub fn other_direction(topo: &Topology, l: usize) -> Option<usize> {
    topo.links[l].reverse_of.or_else(|| topo.links.iter().position(|r| r.reverse_of == Some(l)))
}

/// `path` walked backwards over each link's other direction, if every link has one.
pub fn reverse_path(topo: &Topology, path: &[usize]) -> Option<Vec<usize>> {
    path.iter().rev().map(|&l| other_direction(topo, l)).collect()
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
    fn one_way_links_have_no_way_back() {
        let t = topo(
            &[link("ab", "a", "b", "bidirectional = false"), link("ba", "b", "a", "bidirectional = false")]
                .concat(),
        );
        let (a, b) = (t.node_index("a").unwrap(), t.node_index("b").unwrap());
        assert_eq!(reverse_path(&t, &[0]), None);
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
        assert_eq!(names(&t, &reverse_path(&t, &[ab, bc]).unwrap()), ["bc-rev", "ab-rev"]);
        assert_eq!(other_direction(&t, t.link_index("ab-rev").unwrap()), Some(ab));
        let _ = b;
    }
}
