//! Sequitur (Nevill-Manning and Witten, 1997): the grammar compression Recorder and Pilgrim
//! use over call signatures, kept here only to measure cairn's loop folding against it on
//! the same symbols (`bench/grammar_comparison.sh`); traces never use it.
//!
//! The grammar is built online, one symbol at a time, with Sequitur's two invariants: no
//! pair of adjacent symbols (digram) appears twice, and every rule is used at least twice.
//! Rule bodies live in doubly linked lists over one arena; each rule's list starts and ends
//! at its guard node.

use std::collections::HashMap;

/// A grammar symbol: an input symbol, a rule, or a rule's guard (the list's end marker).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Symbol {
    Terminal(u32),
    Rule(u32),
    Guard(u32),
}

#[derive(Clone, Copy)]
struct Node {
    symbol: Symbol,
    previous: usize,
    next: usize,
}

struct Rule {
    guard: usize,
    uses: u32,
    alive: bool,
}

/// A Sequitur grammar: rule 0 is the whole input.
pub struct Grammar {
    nodes: Vec<Node>,
    free: Vec<usize>,
    rules: Vec<Rule>,
    digrams: HashMap<(Symbol, Symbol), usize>,
    length: u64,
}

impl Default for Grammar {
    fn default() -> Self {
        let mut grammar = Grammar {
            nodes: Vec::new(),
            free: Vec::new(),
            rules: Vec::new(),
            digrams: HashMap::new(),
            length: 0,
        };
        grammar.new_rule();
        grammar
    }
}

impl Grammar {
    fn allocate(&mut self, symbol: Symbol) -> usize {
        let node = Node {
            symbol,
            previous: usize::MAX,
            next: usize::MAX,
        };
        match self.free.pop() {
            Some(index) => {
                self.nodes[index] = node;
                index
            }
            None => {
                self.nodes.push(node);
                self.nodes.len() - 1
            }
        }
    }

    fn new_rule(&mut self) -> u32 {
        let rule = self.rules.len() as u32;
        let guard = self.allocate(Symbol::Guard(rule));
        self.nodes[guard].previous = guard;
        self.nodes[guard].next = guard;
        self.rules.push(Rule {
            guard,
            uses: 0,
            alive: true,
        });
        rule
    }

    fn is_guard(&self, node: usize) -> bool {
        matches!(self.nodes[node].symbol, Symbol::Guard(_))
    }

    fn digram(&self, node: usize) -> (Symbol, Symbol) {
        (
            self.nodes[node].symbol,
            self.nodes[self.nodes[node].next].symbol,
        )
    }

    /// Forgets the digram starting at `node` if the index points at this occurrence.
    fn forget_digram(&mut self, node: usize) {
        if self.is_guard(node) || self.is_guard(self.nodes[node].next) {
            return;
        }
        let digram = self.digram(node);
        if self.digrams.get(&digram) == Some(&node) {
            self.digrams.remove(&digram);
        }
    }

    fn same(&self, a: usize, b: usize) -> bool {
        self.nodes[a].symbol == self.nodes[b].symbol
    }

    /// Links `left` to `right`, forgetting the digram `left` started. In a run of three
    /// equal symbols only one of the two overlapping digrams is indexed: when that one
    /// goes, the other is indexed instead, so the run is not forgotten.
    fn join(&mut self, left: usize, right: usize) {
        let next = self.nodes[left].next;
        if next != usize::MAX {
            self.forget_digram(left);
            let (right_previous, right_next) = (self.nodes[right].previous, self.nodes[right].next);
            if right_previous != usize::MAX
                && right_next != usize::MAX
                && !self.is_guard(right)
                && self.same(right, right_previous)
                && self.same(right, right_next)
            {
                let digram = self.digram(right);
                self.digrams.insert(digram, right);
            }
            let left_previous = self.nodes[left].previous;
            if left_previous != usize::MAX
                && !self.is_guard(left)
                && !self.is_guard(left_previous)
                && self.same(left, next)
                && self.same(left, left_previous)
            {
                let digram = self.digram(left_previous);
                self.digrams.insert(digram, left_previous);
            }
        }
        self.nodes[left].next = right;
        self.nodes[right].previous = left;
    }

    fn insert_after(&mut self, node: usize, symbol: Symbol) -> usize {
        let inserted = self.allocate(symbol);
        let next = self.nodes[node].next;
        self.join(inserted, next);
        self.join(node, inserted);
        if let Symbol::Rule(rule) = symbol {
            self.rules[rule as usize].uses += 1;
        }
        inserted
    }

    fn delete(&mut self, node: usize) {
        let (previous, next) = (self.nodes[node].previous, self.nodes[node].next);
        self.join(previous, next);
        self.forget_digram_at_deleted(node, next);
        if let Symbol::Rule(rule) = self.nodes[node].symbol {
            self.rules[rule as usize].uses -= 1;
        }
        self.free.push(node);
    }

    /// The digram a deleted node started (it is no longer linked, so its old successor is
    /// given).
    fn forget_digram_at_deleted(&mut self, node: usize, next: usize) {
        if self.is_guard(node) || self.is_guard(next) {
            return;
        }
        let digram = (self.nodes[node].symbol, self.nodes[next].symbol);
        if self.digrams.get(&digram) == Some(&node) {
            self.digrams.remove(&digram);
        }
    }

    /// Appends one input symbol to the grammar.
    pub fn push(&mut self, terminal: u32) {
        self.length += 1;
        let guard = self.rules[0].guard;
        let last = self.nodes[guard].previous;
        let node = self.insert_after(last, Symbol::Terminal(terminal));
        let previous = self.nodes[node].previous;
        self.check(previous);
    }

    /// Enforces digram uniqueness for the digram starting at `node`; true if the digram
    /// was already indexed (and so handled).
    fn check(&mut self, node: usize) -> bool {
        if self.is_guard(node) || self.is_guard(self.nodes[node].next) {
            return false;
        }
        let digram = self.digram(node);
        match self.digrams.get(&digram).copied() {
            None => {
                self.digrams.insert(digram, node);
                false
            }
            Some(other) => {
                // Overlapping occurrences (`aaa`) are left alone.
                if other != node && self.nodes[other].next != node {
                    self.matched(node, other);
                }
                true
            }
        }
    }

    /// `node`'s digram also starts at `other`: reuse or make a rule for it.
    fn matched(&mut self, node: usize, other: usize) {
        let other_previous = self.nodes[other].previous;
        let other_after = self.nodes[self.nodes[other].next].next;
        let rule = if self.is_guard(other_previous) && self.is_guard(other_after) {
            // `other` is a whole rule's body.
            let Symbol::Guard(rule) = self.nodes[other_previous].symbol else {
                unreachable!("a guard node holds a guard symbol")
            };
            self.substitute(node, rule);
            rule
        } else {
            let rule = self.new_rule();
            let (first, second) = self.digram(node);
            let guard = self.rules[rule as usize].guard;
            let body_first = self.insert_after(guard, first);
            self.insert_after(body_first, second);
            self.substitute(other, rule);
            self.substitute(node, rule);
            let body_first = self.nodes[guard].next;
            let digram = self.digram(body_first);
            self.digrams.insert(digram, body_first);
            rule
        };
        // Rule utility: a rule used only once, at the start of this body, is inlined.
        if !self.rules[rule as usize].alive {
            return;
        }
        let first = self.nodes[self.rules[rule as usize].guard].next;
        if let Symbol::Rule(inner) = self.nodes[first].symbol {
            if self.rules[inner as usize].uses == 1 {
                self.expand(first, inner);
            }
        }
    }

    /// Replaces the digram starting at `node` with `rule`.
    fn substitute(&mut self, node: usize, rule: u32) {
        let previous = self.nodes[node].previous;
        let first = self.nodes[previous].next;
        self.delete(first);
        let second = self.nodes[previous].next;
        self.delete(second);
        self.insert_after(previous, Symbol::Rule(rule));
        if !self.check(previous) {
            let inserted = self.nodes[previous].next;
            self.check(inserted);
        }
    }

    /// Inlines the body of `rule` (used once, at `node`) in its place.
    fn expand(&mut self, node: usize, rule: u32) {
        let previous = self.nodes[node].previous;
        let next = self.nodes[node].next;
        let guard = self.rules[rule as usize].guard;
        let first = self.nodes[guard].next;
        let last = self.nodes[guard].previous;
        self.rules[rule as usize].alive = false;
        self.rules[rule as usize].uses = 0;
        self.forget_digram(node);
        self.free.push(guard);
        // The node goes without touching the rule's use count (the rule is gone).
        self.nodes[node].symbol = Symbol::Guard(u32::MAX);
        self.join(previous, next);
        self.free.push(node);
        self.join(previous, first);
        self.join(last, next);
        if !self.is_guard(last) && !self.is_guard(next) {
            let digram = self.digram(last);
            self.digrams.insert(digram, last);
        }
    }

    /// Input symbols so far.
    pub fn len(&self) -> u64 {
        self.length
    }

    pub fn is_empty(&self) -> bool {
        self.length == 0
    }

    fn body(&self, rule: u32) -> Vec<Symbol> {
        let guard = self.rules[rule as usize].guard;
        let mut symbols = Vec::new();
        let mut node = self.nodes[guard].next;
        while node != guard {
            symbols.push(self.nodes[node].symbol);
            node = self.nodes[node].next;
        }
        symbols
    }

    /// (rules, symbols in all rule bodies): the grammar's size.
    pub fn size(&self) -> (usize, usize) {
        let live: Vec<u32> = (0..self.rules.len() as u32)
            .filter(|rule| self.rules[*rule as usize].alive)
            .collect();
        let symbols = live.iter().map(|rule| self.body(*rule).len()).sum();
        (live.len(), symbols)
    }

    /// The grammar as bytes: each live rule's body as varints (terminal t → 2t, rule r →
    /// 2·(its position among live rules)+1), preceded by its length.
    pub fn encode(&self) -> Vec<u8> {
        let live: Vec<u32> = (0..self.rules.len() as u32)
            .filter(|rule| self.rules[*rule as usize].alive)
            .collect();
        let position: HashMap<u32, u64> = live
            .iter()
            .enumerate()
            .map(|(index, rule)| (*rule, index as u64))
            .collect();
        let mut out = cairn_format::bytes::ByteWriter::new();
        out.u64(live.len() as u64);
        for rule in &live {
            let body = self.body(*rule);
            out.u64(body.len() as u64);
            for symbol in body {
                out.u64(match symbol {
                    Symbol::Terminal(terminal) => (terminal as u64) << 1,
                    Symbol::Rule(rule) => position[&rule] << 1 | 1,
                    Symbol::Guard(_) => unreachable!("bodies hold no guards"),
                });
            }
        }
        out.into_inner()
    }

    /// The input again, by expanding rule 0.
    pub fn expand_all(&self) -> Vec<u32> {
        let mut out = Vec::new();
        let mut stack = vec![(0u32, 0usize)];
        let bodies: HashMap<u32, Vec<Symbol>> = (0..self.rules.len() as u32)
            .filter(|rule| self.rules[*rule as usize].alive)
            .map(|rule| (rule, self.body(rule)))
            .collect();
        while let Some((rule, position)) = stack.pop() {
            let body = &bodies[&rule];
            if position == body.len() {
                continue;
            }
            stack.push((rule, position + 1));
            match body[position] {
                Symbol::Terminal(terminal) => out.push(terminal),
                Symbol::Rule(inner) => stack.push((inner, 0)),
                Symbol::Guard(_) => {}
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn build(input: &[u32]) -> Grammar {
        let mut grammar = Grammar::default();
        for symbol in input {
            grammar.push(*symbol);
        }
        grammar
    }

    #[test]
    fn the_papers_example() {
        // abcdbcabcdbc → S → AA, A → aBdB, B → bc (Nevill-Manning and Witten, figure 1).
        let input: Vec<u32> = "abcdbcabcdbc".bytes().map(u32::from).collect();
        let grammar = build(&input);
        assert_eq!(grammar.expand_all(), input);
        assert_eq!(grammar.size(), (3, 8));
    }

    #[test]
    fn a_loop_grows_logarithmically() {
        let input: Vec<u32> = (0..1 << 12).map(|index| index % 3).collect();
        let grammar = build(&input);
        assert_eq!(grammar.expand_all(), input);
        let (rules, symbols) = grammar.size();
        assert!(
            rules < 30 && symbols < 80,
            "{rules} rules, {symbols} symbols"
        );
    }

    proptest! {
        #[test]
        fn expanding_gives_the_input_back(input in proptest::collection::vec(0u32..4, 0..400)) {
            let grammar = build(&input);
            prop_assert_eq!(grammar.expand_all(), input);
            // No digram appears twice, but for overlapping runs (`aaa`).
            let mut seen: HashMap<(Symbol, Symbol), (u32, usize)> = HashMap::new();
            for rule in (0..grammar.rules.len() as u32).filter(|r| grammar.rules[*r as usize].alive) {
                let body = grammar.body(rule);
                for position in 1..body.len() {
                    let digram = (body[position - 1], body[position]);
                    if let Some((other_rule, other_position)) = seen.insert(digram, (rule, position)) {
                        let overlapping = other_rule == rule && other_position + 1 == position && digram.0 == digram.1;
                        prop_assert!(overlapping, "digram {:?} twice", digram);
                    }
                }
            }
            // Every rule but the start rule is used at least twice.
            for (index, rule) in grammar.rules.iter().enumerate().skip(1) {
                if rule.alive {
                    prop_assert!(rule.uses >= 2, "rule {} used {} times", index, rule.uses);
                }
            }
        }
    }
}
