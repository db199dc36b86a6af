//! [`RuleId`]: the name every kind, class and verdict carries, so that a user can see
//! which rule decided and override it.
//!
//! Built-in rules name themselves with `&'static str` constants; names read back from
//! the scan cache (or, later, from a user's rules file) are interned once per distinct
//! name, so a `RuleId` stays `Copy` and compares as a pointer-sized string.

use std::collections::HashSet;
use std::fmt;
use std::sync::{Mutex, OnceLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The name of a classification rule (`kind/symlink`, `elf-runpath-supplies-needed`, …).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RuleId(&'static str);

impl RuleId {
    /// A built-in rule's name.
    pub const fn new(name: &'static str) -> RuleId {
        RuleId(name)
    }

    /// A name known only at run time (read from a cache or a rules file), interned:
    /// each distinct name is stored once for the life of the process.
    pub fn intern(name: &str) -> RuleId {
        static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
        let mut names = NAMES
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(&known) = names.get(name) {
            return RuleId(known);
        }
        let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
        names.insert(leaked);
        RuleId(leaked)
    }

    /// The name.
    pub fn as_str(self) -> &'static str {
        self.0
    }

    /// Whether the name is empty (a fact that no rule named).
    pub fn is_empty(self) -> bool {
        self.0.is_empty()
    }
}

impl PartialEq<&str> for RuleId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl fmt::Debug for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RuleId({:?})", self.0)
    }
}

impl Serialize for RuleId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for RuleId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Ok(RuleId::intern(&s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interned_names_are_shared() {
        let a = RuleId::intern("user/my-rule");
        let b = RuleId::intern(&String::from("user/my-rule"));
        assert_eq!(a, b);
        assert!(std::ptr::eq(a.as_str(), b.as_str()));
        assert_eq!(RuleId::new("kind/doc").to_string(), "kind/doc");
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(json, "\"user/my-rule\"");
        assert_eq!(serde_json::from_str::<RuleId>(&json).unwrap(), a);
    }
}
