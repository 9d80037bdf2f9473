//! IP network functions: `cidrsubnet`, `cidrsubnets`, `cidrhost`, `cidrnetmask`.
//!
//! Addresses are handled as `u128` with the address family's bit count, so IPv4 and IPv6
//! share one implementation.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::{Builtin, Call, EvalError, Value};

/// The IP network functions.
pub(super) const FUNCTIONS: &[Builtin] = &[
    Builtin::fixed("cidrhost", 2, cidrhost),
    Builtin::fixed("cidrnetmask", 1, cidrnetmask),
    Builtin::fixed("cidrsubnet", 3, cidrsubnet),
    Builtin::between("cidrsubnets", 1, None, cidrsubnets),
];

/// A parsed CIDR prefix: the network address (host bits cleared) and prefix length.
#[derive(Debug, Clone, Copy)]
struct Prefix {
    network: u128,
    len: u32,
    /// 32 for IPv4, 128 for IPv6.
    bits: u32,
}

impl Prefix {
    fn parse(call: &Call, text: &str) -> Result<Prefix, EvalError> {
        let invalid = || call.error(format!("invalid CIDR address \"{text}\""));
        let (address, len) = text.split_once('/').ok_or_else(invalid)?;
        let (address, bits) = match address.parse::<IpAddr>().map_err(|_| invalid())? {
            IpAddr::V4(v4) => (u128::from(u32::from(v4)), 32),
            IpAddr::V6(v6) => (u128::from(v6), 128),
        };
        let len: u32 = len
            .parse()
            .ok()
            .filter(|len| *len <= bits)
            .ok_or_else(invalid)?;
        Ok(Prefix {
            network: address & mask(len, bits),
            len,
            bits,
        })
    }

    /// The number of addresses, as a power of two, below a prefix of `len` bits.
    fn host_bits(self, len: u32) -> u32 {
        self.bits - len
    }

    fn address_text(self, address: u128) -> String {
        if self.bits == 32 {
            Ipv4Addr::from(address as u32).to_string()
        } else {
            Ipv6Addr::from(address).to_string()
        }
    }

    fn cidr_text(self, address: u128, len: u32) -> String {
        format!("{}/{len}", self.address_text(address))
    }

    /// The subnet `netnum` of `newbits` more bits, as a network address and length.
    fn subnet(self, call: &Call, newbits: i64, netnum: i64) -> Result<(u128, u32), EvalError> {
        let newbits =
            u32::try_from(newbits).map_err(|_| call.error("newbits must not be negative"))?;
        let len = self.len + newbits;
        if len > self.bits {
            return Err(call.error(format!(
                "insufficient address space to extend prefix of {} by {newbits}",
                self.len
            )));
        }
        let netnum =
            u128::try_from(netnum).map_err(|_| call.error("netnum must not be negative"))?;
        if newbits < 128 && netnum >> newbits != 0 {
            return Err(call.error(format!(
                "prefix extension of {newbits} does not accommodate a subnet numbered {netnum}"
            )));
        }
        Ok((self.network | shift_left(netnum, self.host_bits(len)), len))
    }
}

/// The mask of `len` leading one bits in an address of `bits` bits.
fn mask(len: u32, bits: u32) -> u128 {
    let all = if bits == 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    };
    all & !(shift_left(1, bits - len).wrapping_sub(1))
}

fn shift_left(value: u128, by: u32) -> u128 {
    value.checked_shl(by).unwrap_or(0)
}

fn cidrsubnet(call: &Call) -> Result<Value, EvalError> {
    let prefix = Prefix::parse(call, &call.string(0)?)?;
    let (network, len) = prefix.subnet(call, call.integer(1)?, call.integer(2)?)?;
    Ok(Value::String(prefix.cidr_text(network, len)))
}

/// Consecutive subnets, each aligned to its own size right after the previous one.
fn cidrsubnets(call: &Call) -> Result<Value, EvalError> {
    let prefix = Prefix::parse(call, &call.string(0)?)?;
    let end = prefix.network + (shift_left(1, prefix.host_bits(prefix.len)).wrapping_sub(1));
    let mut next = prefix.network;
    let mut out = Vec::new();
    for index in 1..call.args.len() {
        let (_, len) = prefix.subnet(call, call.integer(index)?, 0)?;
        let size = shift_left(1, prefix.host_bits(len));
        let start = next.div_ceil(size.max(1)) * size.max(1);
        if start > end || start.checked_add(size - 1).is_none_or(|last| last > end) {
            return Err(call.error(format!(
                "not enough remaining address space for a subnet with a prefix of {len} bits"
            )));
        }
        out.push(Value::String(prefix.cidr_text(start, len)));
        next = start + size;
    }
    Ok(Value::List(out))
}

/// The address of host `hostnum` in the prefix; a negative number counts from the end.
fn cidrhost(call: &Call) -> Result<Value, EvalError> {
    let prefix = Prefix::parse(call, &call.string(0)?)?;
    let hostnum = call.integer(1)?;
    let host_bits = prefix.host_bits(prefix.len);
    let count = shift_left(1, host_bits);
    let offset = if hostnum < 0 {
        count.checked_sub(u128::from(hostnum.unsigned_abs()))
    } else {
        Some(hostnum as u128)
    };
    match offset {
        Some(offset) if host_bits >= 128 || offset < count => {
            Ok(Value::String(prefix.address_text(prefix.network + offset)))
        }
        _ => Err(call.error(format!(
            "prefix of {} bits does not accommodate a host numbered {hostnum}",
            prefix.len
        ))),
    }
}

fn cidrnetmask(call: &Call) -> Result<Value, EvalError> {
    let prefix = Prefix::parse(call, &call.string(0)?)?;
    if prefix.bits != 32 {
        return Err(call.error("only IPv4 prefixes have a netmask"));
    }
    Ok(Value::String(prefix.address_text(mask(prefix.len, 32))))
}
