//! IP network functions on CIDR prefixes, IPv4 and IPv6.

use super::{Value, integer_arg, string_arg};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A CIDR prefix: its address as a number, the address's width in bits and the prefix length.
struct Prefix {
    address: u128,
    width: u32,
    length: u32,
}

impl Prefix {
    /// Parses "address/length".
    fn parse(text: &str) -> Result<Prefix, String> {
        let invalid = || format!("invalid CIDR prefix \"{text}\"");
        let (address, length) = text.split_once('/').ok_or_else(invalid)?;
        let (address, width) = match address.parse::<IpAddr>().map_err(|_| invalid())? {
            IpAddr::V4(v4) => (u128::from(u32::from(v4)), 32),
            IpAddr::V6(v6) => (u128::from(v6), 128),
        };
        let length: u32 = length.parse().map_err(|_| invalid())?;
        if length > width {
            return Err(invalid());
        }
        Ok(Prefix {
            address,
            width,
            length,
        })
    }

    /// The number of host bits.
    fn host_bits(&self) -> u32 {
        self.width - self.length
    }

    /// The network's first address: the address with its host bits cleared.
    fn network(&self) -> u128 {
        let host_mask = 1u128
            .checked_shl(self.host_bits())
            .map_or(u128::MAX, |v| v - 1);
        self.address & !host_mask
    }

    /// An address of this prefix's family as text.
    fn format(&self, address: u128) -> String {
        match self.width {
            32 => Ipv4Addr::from(address as u32).to_string(),
            _ => Ipv6Addr::from(address).to_string(),
        }
    }
}

/// Whether `number` fits in `bits` bits.
fn fits(number: u128, bits: u32) -> bool {
    bits >= 128 || number >> bits == 0
}

/// `cidrsubnet(prefix, newbits, netnum)`: the subnet number `netnum` of the prefix extended
/// by `newbits` bits.
pub(super) fn cidrsubnet(args: &[Value]) -> Result<Value, String> {
    let prefix = Prefix::parse(&string_arg(args, 0)?)?;
    let (newbits, netnum) = (integer_arg(args, 1)?, integer_arg(args, 2)?);
    let length = u32::try_from(newbits)
        .ok()
        .map(|newbits| prefix.length + newbits)
        .filter(|&length| length <= prefix.width)
        .ok_or_else(|| format!("cannot extend the prefix by {newbits} bits"))?;
    let netnum = u128::try_from(netnum)
        .ok()
        .filter(|&netnum| fits(netnum, length - prefix.length))
        .ok_or_else(|| format!("prefix extension of {newbits} bits has no network {netnum}"))?;
    let subnet = prefix.network() | netnum.checked_shl(prefix.width - length).unwrap_or(0);
    Ok(Value::from(format!("{}/{length}", prefix.format(subnet))))
}

/// `cidrhost(prefix, hostnum)`: the address of host number `hostnum` in the prefix; a
/// negative number counts back from the last address.
pub(super) fn cidrhost(args: &[Value]) -> Result<Value, String> {
    let text = string_arg(args, 0)?;
    let (prefix, hostnum) = (Prefix::parse(&text)?, integer_arg(args, 1)?);
    let bits = prefix.host_bits();
    let back = u128::from(hostnum.unsigned_abs());
    let host = match (hostnum < 0, 1u128.checked_shl(bits)) {
        (false, _) => Some(back),
        (true, Some(size)) => size.checked_sub(back),
        (true, None) => Some(0u128.wrapping_sub(back)),
    };
    let host = host
        .filter(|&host| fits(host, bits))
        .ok_or_else(|| format!("prefix \"{text}\" has no host number {hostnum}"))?;
    Ok(Value::from(prefix.format(prefix.network() | host)))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{check_text, check_unknown, fails};

    #[test]
    fn cidrsubnet_numbers_subnets() {
        // Documentation: cidrsubnet("172.16.0.0/12", 4, 2) is "172.18.0.0/16",
        // cidrsubnet("10.1.2.0/24", 4, 15) is "10.1.2.240/28",
        // cidrsubnet("fd00:fd12:3456:7890::/56", 16, 162) is "fd00:fd12:3456:7800:a200::/72".
        check_text(r#"cidrsubnet("172.16.0.0/12", 4, 2)"#, "172.18.0.0/16");
        check_text(r#"cidrsubnet("10.1.2.0/24", 4, 15)"#, "10.1.2.240/28");
        check_text(
            r#"cidrsubnet("fd00:fd12:3456:7890::/56", 16, 162)"#,
            "fd00:fd12:3456:7800:a200::/72",
        );
        check_text(r#"cidrsubnet("10.0.0.0/16", 8, 0)"#, "10.0.0.0/24");
        check_text(r#"cidrsubnet("10.0.0.0/16", 0, 0)"#, "10.0.0.0/16");
        fails(r#"cidrsubnet("10.0.0.0/16", 2, 4)"#, "has no network 4");
        fails(r#"cidrsubnet("10.0.0.0/30", 3, 0)"#, "cannot extend");
        fails(r#"cidrsubnet("10.0.0.0", 3, 0)"#, "invalid CIDR prefix");
        check_unknown(r#"cidrsubnet(u, 8, 1)"#);
    }

    #[test]
    fn cidrhost_numbers_hosts() {
        // Documentation: cidrhost("10.12.112.0/20", 16) is "10.12.112.16",
        // cidrhost("10.12.112.0/20", 268) is "10.12.113.12",
        // cidrhost("fd00:fd12:3456:7890:00a2::/72", 34) is "fd00:fd12:3456:7890::22".
        check_text(r#"cidrhost("10.12.112.0/20", 16)"#, "10.12.112.16");
        check_text(r#"cidrhost("10.12.112.0/20", 268)"#, "10.12.113.12");
        check_text(
            r#"cidrhost("fd00:fd12:3456:7890:00a2::/72", 34)"#,
            "fd00:fd12:3456:7890::22",
        );
        check_text(r#"cidrhost("10.0.0.0/24", -1)"#, "10.0.0.255");
        fails(r#"cidrhost("10.0.0.0/24", 256)"#, "no host number 256");
        fails(r#"cidrhost("10.0.0.0/24", -257)"#, "no host number -257");
        check_unknown(r#"cidrhost("10.0.0.0/24", u)"#);
    }
}
