//! The input's `Arbitrary` impls, written out as `#[derive(Arbitrary)]` writes them.
//!
//! The derive needs `arbitrary`'s `derive` feature. Cranelift depends on `arbitrary`, so that
//! feature, turned on in the tests (which replay this target's corpus), would make the test
//! build compile Cranelift and wasmtime apart from every other build (docs/architecture.md, "One
//! build of wasmtime"). These impls read the same bytes in the same order as the derive: fields in
//! order, an enum's variant from a `u32` scaled to the variant count, and the input's last field
//! from the rest of the data. So an input decodes to what it decoded to under the derive, and the
//! committed corpus keeps its meaning. Size hints stay at the trait's default, as nothing here
//! reads them (a `Vec` is read element by element, each after a byte that says whether one more
//! follows), and so does the derive's recursion guard, as no type here contains itself.

use super::{Host, Input, Ip, Name, Rule, RuleHost, V4, V4Form, V6};
use arbitrary::{Arbitrary, Result, Unstructured};

/// Never called. Its matches are exhaustive, so a variant added to one of these enums fails to
/// compile here until the count given to `variant` in the enum's `arbitrary`, and its arm there,
/// follow.
#[expect(dead_code, reason = "checked by the compiler, never run")]
fn variant_counts(v4: &V4, v6: &V6, ip: &Ip, form: &V4Form, host: &Host, rule: &RuleHost) {
    match v4 {
        V4::Any(_) | V4::Near { .. } => {} // 2
    }
    match v6 {
        V6::Any(_) | V6::Near { .. } | V6::Mapped(_) | V6::Compatible(_) => {} // 4
    }
    match ip {
        Ip::V4(_) | Ip::V6(_) => {} // 2
    }
    match form {
        V4Form::Dotted | V4Form::Decimal | V4Form::Hex | V4Form::OctalFirst | V4Form::Short => {} // 5
    }
    match host {
        Host::Name(_) | Host::V4(..) | Host::V6(..) => {} // 3
    }
    match rule {
        RuleHost::Exact(_)
        | RuleHost::Subdomains(_)
        | RuleHost::Any
        | RuleHost::V4(_)
        | RuleHost::V6(_) => {} // 5
    }
}

/// Which of `count` variants: the derive's multiply and shift of a `u32`.
fn variant(u: &mut Unstructured, count: u64) -> Result<u64> {
    Ok((u64::from(u32::arbitrary(u)?) * count) >> 32)
}

impl<'a> Arbitrary<'a> for Name {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(Name {
            labels: u.arbitrary()?,
            upper: u.arbitrary()?,
            trailing_dot: u.arbitrary()?,
        })
    }
}

impl<'a> Arbitrary<'a> for V4 {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(match variant(u, 2)? {
            0 => V4::Any(u.arbitrary()?),
            _ => V4::Near {
                base: u.arbitrary()?,
                delta: u.arbitrary()?,
            },
        })
    }
}

impl<'a> Arbitrary<'a> for V6 {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(match variant(u, 4)? {
            0 => V6::Any(u.arbitrary()?),
            1 => V6::Near {
                base: u.arbitrary()?,
                low: u.arbitrary()?,
            },
            2 => V6::Mapped(u.arbitrary()?),
            _ => V6::Compatible(u.arbitrary()?),
        })
    }
}

impl<'a> Arbitrary<'a> for Ip {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(match variant(u, 2)? {
            0 => Ip::V4(u.arbitrary()?),
            _ => Ip::V6(u.arbitrary()?),
        })
    }
}

impl<'a> Arbitrary<'a> for V4Form {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(match variant(u, 5)? {
            0 => V4Form::Dotted,
            1 => V4Form::Decimal,
            2 => V4Form::Hex,
            3 => V4Form::OctalFirst,
            _ => V4Form::Short,
        })
    }
}

impl<'a> Arbitrary<'a> for Host {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(match variant(u, 3)? {
            0 => Host::Name(u.arbitrary()?),
            1 => Host::V4(u.arbitrary()?, u.arbitrary()?),
            _ => Host::V6(u.arbitrary()?, u.arbitrary()?),
        })
    }
}

impl<'a> Arbitrary<'a> for Rule {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(Rule {
            https: u.arbitrary()?,
            host: u.arbitrary()?,
            port: u.arbitrary()?,
            path: u.arbitrary()?,
            trailing_slash: u.arbitrary()?,
            methods: u.arbitrary()?,
        })
    }
}

impl<'a> Arbitrary<'a> for RuleHost {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(match variant(u, 5)? {
            0 => RuleHost::Exact(u.arbitrary()?),
            1 => RuleHost::Subdomains(u.arbitrary()?),
            2 => RuleHost::Any,
            3 => RuleHost::V4(u.arbitrary()?),
            _ => RuleHost::V6(u.arbitrary()?),
        })
    }
}

/// The target decodes its data with `arbitrary_take_rest`: every field in order, the last
/// (`resolved`) from the rest of the data.
impl<'a> Arbitrary<'a> for Input {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(Input {
            rules: u.arbitrary()?,
            allow_private: u.arbitrary()?,
            allow_private_hosts: u.arbitrary()?,
            scheme: u.arbitrary()?,
            userinfo: u.arbitrary()?,
            host: u.arbitrary()?,
            port: u.arbitrary()?,
            path: u.arbitrary()?,
            query: u.arbitrary()?,
            method: u.arbitrary()?,
            lower_method: u.arbitrary()?,
            resolved: u.arbitrary()?,
        })
    }

    fn arbitrary_take_rest(mut u: Unstructured<'a>) -> Result<Self> {
        Ok(Input {
            rules: Arbitrary::arbitrary(&mut u)?,
            allow_private: Arbitrary::arbitrary(&mut u)?,
            allow_private_hosts: Arbitrary::arbitrary(&mut u)?,
            scheme: Arbitrary::arbitrary(&mut u)?,
            userinfo: Arbitrary::arbitrary(&mut u)?,
            host: Arbitrary::arbitrary(&mut u)?,
            port: Arbitrary::arbitrary(&mut u)?,
            path: Arbitrary::arbitrary(&mut u)?,
            query: Arbitrary::arbitrary(&mut u)?,
            method: Arbitrary::arbitrary(&mut u)?,
            lower_method: Arbitrary::arbitrary(&mut u)?,
            resolved: Arbitrary::arbitrary_take_rest(u)?,
        })
    }
}
