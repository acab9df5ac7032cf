//! Interning: values numbered in order of first use (calls, modules, contexts, files of a
//! trace being built or merged).

use std::collections::HashMap;
use std::hash::Hash;

pub(crate) struct Table<T: Hash + Eq + Clone> {
    pub values: Vec<T>,
    index: HashMap<T, u32>,
}

impl<T: Hash + Eq + Clone> Default for Table<T> {
    fn default() -> Self {
        Table {
            values: Vec::new(),
            index: HashMap::new(),
        }
    }
}

impl<T: Hash + Eq + Clone> Table<T> {
    /// The value's index, added at the end if it is new.
    pub fn intern(&mut self, value: &T) -> u32 {
        if let Some(index) = self.index.get(value) {
            return *index;
        }
        self.values.push(value.clone());
        let index = (self.values.len() - 1) as u32;
        self.index.insert(value.clone(), index);
        index
    }
}
