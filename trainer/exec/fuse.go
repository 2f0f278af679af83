package exec

import (
	"fmt"
	"strings"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// fusion is a group of nodes one kernel computes, run at the position of
// its first node (the anchor); the group's other nodes are skipped. Only
// nodes whose every user is in the group are left without a buffer.
type fusion struct {
	kind  string   // "apply", "conv", "poolgrad", "sum", "normsilu" or "normsilugrad"
	out   *G.Node  // the node whose value the kernel writes
	mask  *G.Node  // a ReLU's mask node, written too (nil: no ReLU)
	in    *G.Node  // apply: the input
	scale *G.Node  // apply: a broadcast scale's source (nil: none)
	bias  *G.Node  // apply, conv: a broadcast bias's source (nil: none)
	inner int      // apply: the broadcast's geometry (Epilogue.Inner, C)
	c     int      //
	x     *G.Node  // sum: the input
	along []int    // sum: its axes in x's shape
	na    *normAct // normsilu, normsilugrad: the block
	nodes []string // what was fused, for Program.Fused
}

// fuse finds the groups the planner runs as one kernel:
//   - a ReLU (x ⊙ (x ≥ 0)) after a convolution, into the convolution's
//     permutation (which adds its bias);
//   - a broadcast bias add (x + repeat(b)) and scale (x ⊙ repeat(s)), with
//     a ReLU after them, into one Apply (a dense layer's bias and ReLU; a
//     batch norm's scale, shift and ReLU);
//   - any other ReLU into one Apply writing the result and the mask;
//   - a max-pool gradient times a ReLU mask into the pool's gradient;
//   - chains of sums into one Sum or SumKeep.
func (p *planner) fuse(live []*G.Node) {
	cons := map[int64][]*G.Node{}
	for _, n := range live {
		if kindOf(n) == "gorgonia.sizeOp" {
			continue // reads only a shape, known when planning
		}
		for _, c := range children(p.g.G, n) {
			cons[c.ID()] = append(cons[c.ID()], n)
		}
	}
	taken := func(ns ...*G.Node) bool {
		for _, n := range ns {
			if n != nil && (p.skip[n.ID()] || p.fused[n.ID()] != nil || p.konst[n.ID()] != nil && n.Op() != nil && n.Op().Arity() > 0) {
				return true
			}
		}
		return false
	}
	group := func(anchor *G.Node, f *fusion, members ...*G.Node) {
		p.fused[anchor.ID()] = f
		for _, m := range members {
			if m != nil && m.ID() != anchor.ID() {
				p.skip[m.ID()] = true
			}
		}
		p.prog.Fused = append(p.prog.Fused, strings.Join(f.nodes, " + "))
	}
	// relu finds x's ReLU: m = x ≥ 0 and r = x ⊙ m, x used by nothing else.
	relu := func(x *G.Node) (m, r *G.Node, ok bool) {
		if p.users[x.ID()] != 2 || len(cons[x.ID()]) != 2 {
			return nil, nil, false
		}
		for _, c := range cons[x.ID()] {
			if op, ok := binOf(c); ok && op == OpGE {
				if ch := children(p.g.G, c); len(ch) == 2 && ch[0].ID() == x.ID() && p.isZero(ch[1]) {
					m = c
				}
			}
		}
		if m == nil {
			return nil, nil, false
		}
		for _, c := range cons[x.ID()] {
			if op, ok := binOf(c); ok && op == OpMul && c.ID() != m.ID() {
				if ch := children(p.g.G, c); len(ch) == 2 && (ch[0].ID() == x.ID() && ch[1].ID() == m.ID() || ch[1].ID() == x.ID() && ch[0].ID() == m.ID()) {
					r = c
				}
			}
		}
		return m, r, r != nil && !taken(m, r)
	}
	plainOperands := func(n *G.Node) (a, b *G.Node, ok bool) {
		ch := children(p.g.G, n)
		if len(ch) != 2 || p.scalar[ch[0].ID()] || p.scalar[ch[1].ID()] || size(ch[0].Shape()) != size(n.Shape()) || size(ch[1].Shape()) != size(n.Shape()) {
			return nil, nil, false
		}
		return ch[0], ch[1], true
	}
	// shared marks the broadcasts that several element-wise products or
	// sums read (a batch norm's scale: the forward product and the
	// gradient's): each of them may read the small tensor instead, and the
	// broadcast is not materialised (at 48×48 it would keep a whole
	// activation's worth alive from the forward pass to the backward).
	// used records which of them did, as {broadcast, reader} (see the end
	// of fuse).
	shared := map[int64]bool{}
	used := map[[2]int64]bool{}
	for _, n := range live {
		if kindOf(n) != "*gorgonia.repeatOp" || p.users[n.ID()] < 2 || len(cons[n.ID()]) != p.users[n.ID()] {
			continue
		}
		ok := true
		for _, c := range cons[n.ID()] {
			op, bin := binOf(c)
			a, b, plain := plainOperands(c)
			if !bin || op != OpMul && op != OpAdd || !plain || (a.ID() == n.ID()) == (b.ID() == n.ID()) {
				ok = false
			}
		}
		if ok {
			shared[n.ID()] = true
		}
	}
	// bcast finds a chain of repeats broadcasting a small tensor to n's
	// shape, each used only by the next (or n shared).
	bcast := func(n *G.Node) (src *G.Node, chain []*G.Node, inner, c int, ok bool) {
		cur, sh := n, shared[n.ID()]
		for kindOf(cur) == "*gorgonia.repeatOp" && (p.users[cur.ID()] == 1 || cur == n && sh) && (sh || !taken(cur)) {
			chain = append(chain, cur)
			cur = children(p.g.G, cur)[0]
		}
		if len(chain) == 0 || p.scalar[cur.ID()] {
			return nil, nil, 0, 0, false
		}
		s, o := cur.Shape(), n.Shape()
		if len(s) != len(o) {
			return nil, nil, 0, 0, false
		}
		lo, hi := -1, -1
		for d := range s {
			switch {
			case s[d] == o[d] && s[d] != 1:
				if lo < 0 {
					lo = d
				} else if hi >= 0 {
					return nil, nil, 0, 0, false // two runs of kept axes
				}
			case s[d] == 1:
				if lo >= 0 && hi < 0 {
					hi = d
				}
			default:
				return nil, nil, 0, 0, false
			}
		}
		if lo < 0 {
			lo, hi = len(o), len(o)
		}
		if hi < 0 {
			hi = len(o)
		}
		return cur, chain, size(o[hi:]), size(o[lo:hi]), true
	}
	// late says whether src is computed after the anchor's position (a
	// leaf's buffer is there from the start).
	late := func(src, anchor *G.Node) bool {
		_, bound := p.buf[p.root(src)]
		return !bound && p.pos[src.ID()] > p.pos[anchor.ID()]
	}
	// splitBcast returns the operand broadcast by a chain and the other.
	splitBcast := func(n *G.Node) (other, src *G.Node, chain []*G.Node, inner, c int, ok bool) {
		a, b, ok := plainOperands(n)
		if !ok {
			return nil, nil, nil, 0, 0, false
		}
		if src, chain, inner, c, ok := bcast(b); ok {
			return a, src, chain, inner, c, true
		}
		if src, chain, inner, c, ok := bcast(a); ok {
			return b, src, chain, inner, c, true
		}
		return nil, nil, nil, 0, 0, false
	}
	// Conv-BN-SiLU blocks' batch norms, scales, shifts and SiLUs.
	p.fuseNormSiLU(live, fuseKit{cons: cons, taken: taken, splitBcast: splitBcast, group: group, used: used})
	// Convolutions with a ReLU.
	for _, n := range live {
		if _, ok := n.Op().(ConvOp); !ok || taken(n) {
			continue
		}
		if m, r, ok := relu(n); ok {
			group(n, &fusion{kind: "conv", out: r, mask: m, nodes: []string{n.Op().String(), "ReLU"}}, m, r)
		}
	}
	// Broadcast adds (with a broadcast scale before them), then scales.
	for _, want := range []BinOp{OpAdd, OpMul} {
		for _, x := range live {
			if op, ok := binOf(x); !ok || op != want || taken(x) {
				continue
			}
			base, src, chain, inner, c, ok := splitBcast(x)
			if !ok || taken(base) {
				continue
			}
			f := &fusion{kind: "apply", in: base, inner: inner, c: c, out: x, nodes: []string{fmt.Sprintf("%v (broadcast %v)", x.Op(), src.Shape())}}
			members := append([]*G.Node{x}, chain...)
			anchor := x
			uses := [][2]*G.Node{{chain[0], x}}
			if want == OpAdd {
				f.bias = src
				if op, ok := binOf(base); ok && op == OpMul && p.users[base.ID()] == 1 {
					if in, ssrc, schain, sinner, sc, ok := splitBcast(base); ok && sinner == inner && sc == c && !taken(in) {
						f.in, f.scale, anchor = in, ssrc, base
						members = append(append(members, base), schain...)
						f.nodes = append([]string{fmt.Sprintf("%v (broadcast %v)", base.Op(), ssrc.Shape())}, f.nodes...)
						uses = append(uses, [2]*G.Node{schain[0], base})
					}
				}
			} else {
				f.scale = src
			}
			if m, r, ok := relu(x); ok {
				f.out, f.mask = r, m
				members = append(members, m, r)
				f.nodes = append(f.nodes, "ReLU")
			}
			if late(src, anchor) || f.scale != nil && late(f.scale, anchor) {
				continue
			}
			group(anchor, f, members...)
			for _, u := range uses {
				if shared[u[0].ID()] {
					used[[2]int64{u[0].ID(), u[1].ID()}] = true
				}
			}
		}
	}
	// A shared broadcast one of whose readers was not fused is computed
	// after all (with the repeats under it).
	for id := range shared {
		all := true
		for _, c := range cons[id] {
			all = all && used[[2]int64{id, c.ID()}]
		}
		if all {
			continue
		}
		for cur := p.g.G.Node(id).(*G.Node); kindOf(cur) == "*gorgonia.repeatOp" && p.skip[cur.ID()]; cur = children(p.g.G, cur)[0] {
			delete(p.skip, cur.ID())
		}
	}
	// Other ReLUs, at the mask's position.
	for _, x := range live {
		if taken(x) || x.Op() == nil {
			continue
		}
		if m, r, ok := relu(x); ok && p.pos[m.ID()] < p.pos[r.ID()] && !p.scalar[x.ID()] {
			group(m, &fusion{kind: "apply", in: x, out: r, mask: m, inner: 1, c: 1, nodes: []string{"ReLU"}}, r)
		}
	}
	// Max-pool gradients times a ReLU mask.
	for _, d := range live {
		if kindOf(d) != "*gorgonia.maxPoolDiffOp" || taken(d) || p.users[d.ID()] != 1 || len(cons[d.ID()]) != 1 {
			continue
		}
		q := cons[d.ID()][0]
		if op, ok := binOf(q); !ok || op != OpMul || taken(q) {
			continue
		}
		ch := children(p.g.G, q)
		m := ch[0]
		if m.ID() == d.ID() {
			m = ch[1]
		}
		if !p.isMask(m) || m.ID() == d.ID() || p.pos[m.ID()] > p.pos[d.ID()] || size(m.Shape()) != size(q.Shape()) {
			continue
		}
		group(d, &fusion{kind: "poolgrad", out: q, mask: m, nodes: []string{d.Op().String(), "⊙ ReLU mask"}}, q)
	}
	// Chains of sums.
	for _, s1 := range live {
		along, ok := sumAxes(s1)
		if !ok || taken(s1) {
			continue
		}
		x := children(p.g.G, s1)[0]
		rem := []int{} // x's axes not reduced yet, in order
		red := map[int]bool{}
		for _, a := range along {
			red[a] = true
		}
		for d := range x.Shape() {
			if !red[d] {
				rem = append(rem, d)
			}
		}
		axes := append([]int{}, along...)
		cur, members, names := s1, []*G.Node{}, []string{s1.Op().String()}
		for p.users[cur.ID()] == 1 && len(cons[cur.ID()]) == 1 {
			next := cons[cur.ID()][0]
			al, ok := sumAxes(next)
			if !ok || taken(next) {
				break
			}
			var keep []int
			drop := map[int]bool{}
			for _, a := range al {
				if a < 0 || a >= len(rem) {
					ok = false
					break
				}
				axes = append(axes, rem[a])
				drop[a] = true
			}
			if !ok {
				break
			}
			for k, d := range rem {
				if !drop[k] {
					keep = append(keep, d)
				}
			}
			rem = keep
			members = append(members, next)
			names = append(names, next.Op().String())
			cur = next
		}
		if len(members) == 0 || size(cur.Shape()) != size(x.Shape())/max(size(pick(x.Shape(), axes)), 1) {
			continue
		}
		if _, _, _, _, ok := sumShape(x.Shape(), axes); !ok {
			continue
		}
		group(s1, &fusion{kind: "sum", x: x, along: axes, out: cur, nodes: names}, members...)
	}
}

// pick returns the dims of s at axes.
func pick(s tensor.Shape, axes []int) tensor.Shape {
	out := make(tensor.Shape, 0, len(axes))
	for _, a := range axes {
		out = append(out, s[a])
	}
	return out
}

// isZero says whether n is the float32 constant 0.
func (p *planner) isZero(n *G.Node) bool {
	if !p.scalar[n.ID()] || n.Op() != nil && n.Op().Arity() != 0 || n.Value() == nil {
		return false
	}
	v, ok := n.Value().Data().(float32)
	return ok && v == 0
}

// isMask says whether n is a ReLU's mask: x ≥ 0 returning 1 or 0.
func (p *planner) isMask(n *G.Node) bool {
	op, ok := binOf(n)
	if !ok || op != OpGE {
		return false
	}
	ch := children(p.g.G, n)
	return len(ch) == 2 && p.isZero(ch[1])
}

// planFusion adds the step of fusion f at its anchor n (the i-th node).
func (p *planner) planFusion(i int, n *G.Node, f *fusion) {
	bufOr := func(x *G.Node) Buf {
		if x == nil {
			return NoBuf
		}
		return p.bufOf(x)
	}
	ep := Plain()
	if f.mask != nil && f.kind != "poolgrad" { // the pool gradient reads a forward mask
		ep.Mask = p.out(f.mask)
	}
	name := strings.Join(f.nodes, " + ")
	switch f.kind {
	case "conv":
		ins := children(p.g.G, n)
		var in []Buf
		for _, c := range ins {
			in = append(in, p.bufOf(c))
		}
		p.conv(i, n, n.Op().(ConvOp), in, f.out, ep)
		p.prog.Names[len(p.prog.Names)-1] = name
	case "apply":
		ep.Scale, ep.Bias, ep.Inner, ep.C = bufOr(f.scale), bufOr(f.bias), f.inner, f.c
		in := p.bufOf(f.in)
		o := p.out(f.out)
		sz := size(f.out.Shape())
		be := p.be
		p.add(name, func() { be.Apply(in, o, sz, ep) })
		p.release(i, n)
	case "poolgrad":
		if !p.poolGrad(i, n, f.out, f.mask) {
			p.fail("%s: the max-pool gradient has no forward pool", name)
		}
	case "sum":
		if !p.sum(i, n, f.out, f.x, f.along, name) {
			p.fail("%s cannot run as one sum", name)
		}
	case "normsilu", "normsilugrad":
		p.planNormSiLU(i, n, f, name)
	}
}
