//! C types as a hook needs them: what a value is at the ABI level (an integer of some width
//! and sign, a floating-point number, a pointer), after following typedefs to the end.

use std::collections::HashMap;

use lang_c::ast::{
    DeclarationSpecifier, Declarator, DerivedDeclarator, PointerQualifier, TypeQualifier,
    TypeSpecifier,
};
use lang_c::span::Node;

/// A parameter's or result's type, as far as passing it through a hook goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CType {
    Void,
    /// An integer: its Rust spelling (`c_int`, `c_long`, `u64`...).
    Integer(&'static str),
    Float(&'static str),
    /// A pointer; `text` when it points to `char` (a name the hook may read), `constant`
    /// when the pointee is `const`.
    Pointer {
        constant: bool,
        text: bool,
    },
    /// Passed by value but not a scalar (a struct, a union, `long double`, `_Complex`): a
    /// hook cannot forward it portably, so the function is skipped.
    Unsupported(String),
}

impl CType {
    /// The Rust spelling in a call-table row (types there are `libc` names or primitives).
    pub fn rust(&self) -> String {
        match self {
            CType::Void => "()".into(),
            CType::Integer(name) | CType::Float(name) => (*name).into(),
            CType::Pointer { constant, text } => {
                let pointee = if *text { "c_char" } else { "c_void" };
                format!("*{} {pointee}", if *constant { "const" } else { "mut" })
            }
            CType::Unsupported(what) => what.clone(),
        }
    }
}

/// What a typedef name stands for: its specifiers and the derived part of its declarator,
/// so `typedef int64_t hid_t;` and `typedef const char *name_t;` both resolve.
#[derive(Clone)]
pub struct Alias {
    pub specifiers: Vec<Specifier>,
    pub derived: Vec<Derived>,
}

/// The part of a specifier list that decides a type.
#[derive(Clone, Debug, PartialEq)]
pub enum Specifier {
    Void,
    Char,
    Short,
    Int,
    Long,
    Float,
    Double,
    Signed,
    Unsigned,
    Bool,
    Complex,
    /// A struct or union by name (or anonymous).
    Aggregate(String),
    Enum,
    Typedef(String),
    Const,
    /// `typeof`, `_Float128` and friends: not something a hook passes through.
    Other(&'static str),
}

/// One step of a declarator, from the base type out: the last is the outermost type
/// (nearest the name), as lang-c lists them.
#[derive(Clone, Debug, PartialEq)]
pub enum Derived {
    Pointer { constant: bool },
    Array,
    Function,
}

pub fn specifiers(list: &[Node<DeclarationSpecifier>]) -> Vec<Specifier> {
    list.iter()
        .filter_map(|specifier| match &specifier.node {
            DeclarationSpecifier::TypeSpecifier(node) => Some(type_specifier(&node.node)),
            DeclarationSpecifier::TypeQualifier(node) => {
                matches!(node.node, TypeQualifier::Const).then_some(Specifier::Const)
            }
            _ => None,
        })
        .collect()
}

fn type_specifier(specifier: &TypeSpecifier) -> Specifier {
    match specifier {
        TypeSpecifier::Void => Specifier::Void,
        TypeSpecifier::Char => Specifier::Char,
        TypeSpecifier::Short => Specifier::Short,
        TypeSpecifier::Int => Specifier::Int,
        TypeSpecifier::Long => Specifier::Long,
        TypeSpecifier::Float => Specifier::Float,
        TypeSpecifier::Double => Specifier::Double,
        TypeSpecifier::Signed => Specifier::Signed,
        TypeSpecifier::Unsigned => Specifier::Unsigned,
        TypeSpecifier::Bool => Specifier::Bool,
        TypeSpecifier::Complex => Specifier::Complex,
        TypeSpecifier::Struct(node) => Specifier::Aggregate(
            node.node
                .identifier
                .as_ref()
                .map_or_else(|| "anonymous".into(), |name| name.node.name.clone()),
        ),
        TypeSpecifier::Enum(_) => Specifier::Enum,
        TypeSpecifier::TypedefName(name) => Specifier::Typedef(name.node.name.clone()),
        TypeSpecifier::Atomic(_) => Specifier::Other("_Atomic"),
        TypeSpecifier::TypeOf(_) => Specifier::Other("typeof"),
        TypeSpecifier::TS18661Float(_) => Specifier::Other("_FloatN"),
    }
}

/// The declarator's steps, and its name if it has one.
pub fn derived(declarator: &Declarator) -> Vec<Derived> {
    declarator
        .derived
        .iter()
        .map(|step| match &step.node {
            DerivedDeclarator::Pointer(qualifiers) => Derived::Pointer {
                constant: qualifiers.iter().any(|qualifier| {
                    matches!(
                        &qualifier.node,
                        PointerQualifier::TypeQualifier(node) if node.node == TypeQualifier::Const
                    )
                }),
            },
            DerivedDeclarator::Array(_) => Derived::Array,
            DerivedDeclarator::Function(_)
            | DerivedDeclarator::KRFunction(_)
            | DerivedDeclarator::Block(_) => Derived::Function,
        })
        .collect()
}

/// Resolves a type given by specifiers and declarator steps, following typedefs (at most 32
/// deep: a cycle is a broken header, reported as unsupported).
pub fn resolve(
    specifiers: &[Specifier],
    derived: &[Derived],
    typedefs: &HashMap<String, Alias>,
) -> CType {
    resolve_depth(specifiers, derived, typedefs, 0)
}

fn resolve_depth(
    specifiers: &[Specifier],
    derived: &[Derived],
    typedefs: &HashMap<String, Alias>,
    depth: usize,
) -> CType {
    if depth > 32 {
        return CType::Unsupported("typedef cycle".into());
    }
    // The outermost step decides: a pointer (or an array parameter, which is one), or a
    // function type (only through a typedef of a function, passed by pointer).
    if let Some(last) = derived.last() {
        return match last {
            Derived::Pointer { .. } | Derived::Array | Derived::Function => {
                let pointee_constant = match derived.len() {
                    1 => specifiers.contains(&Specifier::Const),
                    _ => matches!(
                        derived[derived.len() - 2],
                        Derived::Pointer { constant: true }
                    ),
                };
                let text = derived.len() == 1 && is_char(specifiers, typedefs, depth);
                CType::Pointer {
                    constant: pointee_constant,
                    text,
                }
            }
        };
    }
    if let Some(name) = specifiers.iter().find_map(|specifier| match specifier {
        Specifier::Typedef(name) => Some(name),
        _ => None,
    }) {
        // Names the compiler defines itself.
        if name == "__builtin_va_list" {
            return CType::Unsupported("va_list".into());
        }
        return match typedefs.get(name) {
            Some(alias) => {
                let mut specifiers = alias.specifiers.clone();
                if derived.is_empty() && !alias.derived.is_empty() {
                    // `const name_t` where name_t is a pointer: the pointer is constant,
                    // not its target; only the target's constness matters to the row.
                    specifiers.retain(|specifier| *specifier != Specifier::Const);
                }
                resolve_depth(&specifiers, &alias.derived, typedefs, depth + 1)
            }
            None => CType::Unsupported(format!("unknown type {name}")),
        };
    }
    scalar(specifiers)
}

fn is_char(specifiers: &[Specifier], typedefs: &HashMap<String, Alias>, depth: usize) -> bool {
    if specifiers.contains(&Specifier::Char) {
        return true;
    }
    specifiers.iter().any(|specifier| match specifier {
        Specifier::Typedef(name) if depth < 32 => typedefs.get(name).is_some_and(|alias| {
            alias.derived.is_empty() && is_char(&alias.specifiers, typedefs, depth + 1)
        }),
        _ => false,
    })
}

fn scalar(specifiers: &[Specifier]) -> CType {
    let count = |wanted: &Specifier| specifiers.iter().filter(|s| *s == wanted).count();
    let unsigned = count(&Specifier::Unsigned) > 0;
    if let Some(other) = specifiers.iter().find_map(|specifier| match specifier {
        Specifier::Aggregate(name) => Some(format!("struct {name} by value")),
        Specifier::Complex => Some("_Complex".into()),
        Specifier::Other(what) => Some((*what).into()),
        _ => None,
    }) {
        return CType::Unsupported(other);
    }
    if count(&Specifier::Void) > 0 {
        return CType::Void;
    }
    if count(&Specifier::Enum) > 0 {
        return CType::Integer("c_int");
    }
    if count(&Specifier::Bool) > 0 {
        return CType::Integer("bool");
    }
    if count(&Specifier::Float) > 0 {
        return CType::Float("f32");
    }
    if count(&Specifier::Double) > 0 {
        return if count(&Specifier::Long) > 0 {
            CType::Unsupported("long double".into())
        } else {
            CType::Float("f64")
        };
    }
    let longs = count(&Specifier::Long);
    CType::Integer(
        match (
            count(&Specifier::Char) > 0,
            count(&Specifier::Short) > 0,
            longs,
            unsigned,
        ) {
            (true, _, _, false) if count(&Specifier::Signed) > 0 => "i8",
            (true, _, _, false) => "c_char",
            (true, _, _, true) => "u8",
            (_, true, _, false) => "i16",
            (_, true, _, true) => "u16",
            (_, _, 0, false) => "c_int",
            (_, _, 0, true) => "c_uint",
            (_, _, 1, false) => "c_long",
            (_, _, 1, true) => "c_ulong",
            (_, _, _, false) => "i64",
            (_, _, _, true) => "u64",
        },
    )
}
