package jobspec

import (
	"fmt"
	"math/big"
	"net/netip"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/gocty"
)

// The cidr* functions compute addresses inside an IPv4 or IPv6 prefix,
// with the semantics of Terraform's functions of the same names.

var cidrHostFunc = function.New(&function.Spec{
	Params: []function.Parameter{
		{Name: "prefix", Type: cty.String},
		{Name: "hostnum", Type: cty.Number},
	},
	Type: function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		prefix, err := parsePrefix(args[0].AsString())
		if err != nil {
			return cty.UnknownVal(cty.String), err
		}
		var hostnum int64
		if err := gocty.FromCtyValue(args[1], &hostnum); err != nil {
			return cty.UnknownVal(cty.String), fmt.Errorf("invalid host number: %w", err)
		}
		hostBits := prefix.Addr().BitLen() - prefix.Bits()
		size := new(big.Int).Lsh(big.NewInt(1), uint(hostBits))
		n := big.NewInt(hostnum)
		if hostnum < 0 {
			n.Add(n, size)
		}
		if n.Sign() < 0 || n.Cmp(size) >= 0 {
			return cty.UnknownVal(cty.String), fmt.Errorf("prefix %s has no host number %d", prefix, hostnum)
		}
		return cty.StringVal(addToAddr(prefix.Masked().Addr(), n).String()), nil
	},
})

var cidrNetmaskFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "prefix", Type: cty.String}},
	Type:   function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		prefix, err := parsePrefix(args[0].AsString())
		if err != nil {
			return cty.UnknownVal(cty.String), err
		}
		if !prefix.Addr().Is4() {
			return cty.UnknownVal(cty.String), fmt.Errorf("cidrnetmask only supports IPv4 prefixes, not %s", prefix)
		}
		mask := ^uint32(0) << (32 - prefix.Bits())
		if prefix.Bits() == 0 {
			mask = 0
		}
		a := netip.AddrFrom4([4]byte{byte(mask >> 24), byte(mask >> 16), byte(mask >> 8), byte(mask)})
		return cty.StringVal(a.String()), nil
	},
})

var cidrSubnetFunc = function.New(&function.Spec{
	Params: []function.Parameter{
		{Name: "prefix", Type: cty.String},
		{Name: "newbits", Type: cty.Number},
		{Name: "netnum", Type: cty.Number},
	},
	Type: function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		prefix, err := parsePrefix(args[0].AsString())
		if err != nil {
			return cty.UnknownVal(cty.String), err
		}
		var newbits int
		var netnum int64
		if err := gocty.FromCtyValue(args[1], &newbits); err != nil {
			return cty.UnknownVal(cty.String), fmt.Errorf("invalid newbits: %w", err)
		}
		if err := gocty.FromCtyValue(args[2], &netnum); err != nil {
			return cty.UnknownVal(cty.String), fmt.Errorf("invalid netnum: %w", err)
		}
		sub, err := subnet(prefix, newbits, big.NewInt(netnum))
		if err != nil {
			return cty.UnknownVal(cty.String), err
		}
		return cty.StringVal(sub.String()), nil
	},
})

var cidrSubnetsFunc = function.New(&function.Spec{
	Params:   []function.Parameter{{Name: "prefix", Type: cty.String}},
	VarParam: &function.Parameter{Name: "newbits", Type: cty.Number},
	Type:     function.StaticReturnType(cty.List(cty.String)),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		prefix, err := parsePrefix(args[0].AsString())
		if err != nil {
			return cty.UnknownVal(cty.List(cty.String)), err
		}
		if len(args) == 1 {
			return cty.ListValEmpty(cty.String), nil
		}
		bits := prefix.Addr().BitLen()
		base := addrToInt(prefix.Masked().Addr())
		end := new(big.Int).Add(base, new(big.Int).Lsh(big.NewInt(1), uint(bits-prefix.Bits())))
		next := new(big.Int).Set(base)
		var out []cty.Value
		for i, a := range args[1:] {
			var newbits int
			if err := gocty.FromCtyValue(a, &newbits); err != nil {
				return cty.UnknownVal(cty.List(cty.String)), fmt.Errorf("newbits #%d: %w", i+1, err)
			}
			length := prefix.Bits() + newbits
			if newbits < 1 || length > bits {
				return cty.UnknownVal(cty.List(cty.String)), fmt.Errorf("newbits #%d (%d) does not fit prefix %s", i+1, newbits, prefix)
			}
			size := new(big.Int).Lsh(big.NewInt(1), uint(bits-length))
			// Align the next free address up to this subnet's size.
			rem := new(big.Int).Mod(new(big.Int).Sub(next, base), size)
			if rem.Sign() != 0 {
				next.Add(next, new(big.Int).Sub(size, rem))
			}
			if new(big.Int).Add(next, size).Cmp(end) > 0 {
				return cty.UnknownVal(cty.List(cty.String)), fmt.Errorf("not enough room in %s for subnet #%d", prefix, i+1)
			}
			addr := intToAddr(next, prefix.Addr().Is4())
			out = append(out, cty.StringVal(netip.PrefixFrom(addr, length).String()))
			next.Add(next, size)
		}
		return cty.ListVal(out), nil
	},
})

func parsePrefix(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("invalid CIDR prefix %q: %w", s, err)
	}
	return p, nil
}

func subnet(prefix netip.Prefix, newbits int, netnum *big.Int) (netip.Prefix, error) {
	bits := prefix.Addr().BitLen()
	length := prefix.Bits() + newbits
	if newbits < 0 || length > bits {
		return netip.Prefix{}, fmt.Errorf("cannot extend prefix %s by %d bits", prefix, newbits)
	}
	limit := new(big.Int).Lsh(big.NewInt(1), uint(newbits))
	if netnum.Sign() < 0 || netnum.Cmp(limit) >= 0 {
		return netip.Prefix{}, fmt.Errorf("prefix %s extended by %d bits has no network number %s", prefix, newbits, netnum)
	}
	offset := new(big.Int).Lsh(netnum, uint(bits-length))
	return netip.PrefixFrom(addToAddr(prefix.Masked().Addr(), offset), length), nil
}

func addrToInt(a netip.Addr) *big.Int {
	b := a.AsSlice()
	return new(big.Int).SetBytes(b)
}

func intToAddr(n *big.Int, is4 bool) netip.Addr {
	size := 16
	if is4 {
		size = 4
	}
	buf := make([]byte, size)
	n.FillBytes(buf)
	a, _ := netip.AddrFromSlice(buf)
	return a
}

func addToAddr(a netip.Addr, n *big.Int) netip.Addr {
	return intToAddr(new(big.Int).Add(addrToInt(a), n), a.Is4())
}
