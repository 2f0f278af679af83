package exec

import (
	G "gorgonia.org/gorgonia"
)

// normAct is one conv-BN-SiLU block's batch norm, scale, shift and SiLU,
// and their gradients, as the graph has them:
//
//	x̂ = BatchNorm(x); z = x̂ ⊙ rep(γ) + rep(β); y = SiLU(z)
//	dz = ∂SiLU(z, dy); dβ = Σ dz; dγ = Σ x̂ ⊙ dz; dx = ∂BatchNorm(x, rep(γ) ⊙ dz)
//
// (Σ over all axes but the channel's). A NormSiLUer runs the forward half
// at x̂'s position and the backward half at dz's; x̂, z and the products are
// never written.
type normAct struct {
	bn             NormOp
	xhat, x        *G.Node
	gamma, beta    *G.Node // the broadcasts' sources: C floats each
	y, dy, dz, dx  *G.Node
	dgamma, dbeta  *G.Node // the last sums of the two channel sums
	fwd, bwd       []*G.Node
	scale, product *G.Node // γ's shared broadcast and its backward reader
}

// fuseKit is what fuse's matchers share.
type fuseKit struct {
	cons       map[int64][]*G.Node
	taken      func(ns ...*G.Node) bool
	splitBcast func(n *G.Node) (other, src *G.Node, chain []*G.Node, inner, c int, ok bool)
	group      func(anchor *G.Node, f *fusion, members ...*G.Node)
	used       map[[2]int64]bool
}

// fuseNormSiLU groups every whole conv-BN-SiLU block of a training graph
// (see normAct) on a backend that runs them as one kernel each way.
func (p *planner) fuseNormSiLU(live []*G.Node, k fuseKit) {
	if _, ok := p.be.(NormSiLUer); !ok {
		return
	}
	for _, b := range live {
		na, ok := p.matchNormSiLU(b, k)
		if !ok || k.taken(append(append([]*G.Node{na.dz}, na.fwd...), na.bwd...)...) {
			continue
		}
		name := na.bn.(G.Op).String() + " + scale, shift + SiLU"
		k.group(b, &fusion{kind: "normsilu", na: na, out: na.y, nodes: []string{name}}, na.fwd...)
		k.group(na.dz, &fusion{kind: "normsilugrad", na: na, out: na.dx, nodes: []string{"∂(" + name + ")"}}, na.bwd...)
		k.used[[2]int64{na.scale.ID(), na.fwd[0].ID()}] = true
		k.used[[2]int64{na.scale.ID(), na.product.ID()}] = true
		if part := p.partOf(na, k); part > 0 {
			p.parted[na.x.ID()], p.parted[na.dx.ID()] = part, part
		}
	}
}

// partOf says in parts of how many images the block's x and dx may stay
// as the convolution before it computes them (0: N×C×HW): x must be a
// convolution without bias whose only readers are the batch norm and its
// gradient, and dx read only by that convolution's image and filter
// gradients.
func (p *planner) partOf(na *normAct, k fuseKit) int {
	c, ok := na.x.Op().(ConvOp)
	if !ok || len(children(p.g.G, na.x)) != 2 || k.taken(na.x) || !p.only(na.x, 2, k) {
		return 0
	}
	for _, r := range k.cons[na.dx.ID()] {
		if cg, ok := r.Op().(ConvGradOp); !ok || cg.ConvForward() != c || cg.ConvGradWhich() == 2 {
			return 0
		}
	}
	if len(k.cons[na.dx.ID()]) != p.users[na.dx.ID()] {
		return 0
	}
	return partImages(convOf(c), p.budget)
}

// matchNormSiLU finds the block whose batch norm is node b.
func (p *planner) matchNormSiLU(b *G.Node, k fuseKit) (*normAct, bool) {
	bn, ok := b.Op().(NormOp)
	if !ok || k.taken(b) {
		return nil, false
	}
	if _, _, training := bn.NormParams(); !training || len(b.Shape()) < 3 {
		return nil, false
	}
	s := b.Shape()
	c, hw := s[1], size(s[2:])
	na := &normAct{bn: bn, xhat: b, x: children(p.g.G, b)[0]}
	// x̂'s readers: z's product with γ, and γ's gradient's with dz.
	var m, prod *G.Node
	var gchain []*G.Node
	if !p.only(b, 2, k) {
		return nil, false
	}
	for _, r := range k.cons[b.ID()] {
		if op, ok := binOf(r); !ok || op != OpMul {
			return nil, false
		}
		if other, src, chain, inner, cc, ok := k.splitBcast(r); ok && other.ID() == b.ID() && inner == hw && cc == c {
			m, na.gamma, gchain = r, src, chain
		} else {
			prod = r
		}
	}
	if m == nil || prod == nil || !p.only(m, 1, k) {
		return nil, false
	}
	z := k.cons[m.ID()][0]
	other, bsrc, bchain, inner, cc, ok := k.splitBcast(z)
	if op, isBin := binOf(z); !isBin || op != OpAdd || !ok || other.ID() != m.ID() || inner != hw || cc != c {
		return nil, false
	}
	na.beta, na.scale = bsrc, gchain[0]
	if !p.bound(na.gamma) || !p.bound(na.beta) || !p.findSiLU(na, z, k) {
		return nil, false
	}
	na.fwd = append(append([]*G.Node{m, z, na.y}, gchain...), bchain...)
	if !p.matchNormSiLUGrad(na, prod, k) {
		return nil, false
	}
	return na, true
}

// only says whether n's readers are exactly n readers of the graph, none
// of them an output.
func (p *planner) only(n *G.Node, readers int, k fuseKit) bool {
	return len(k.cons[n.ID()]) == readers && p.users[n.ID()] == readers
}

// bound says whether n's buffer is there from the start (a parameter).
func (p *planner) bound(n *G.Node) bool {
	_, ok := p.buf[p.root(n)]
	return ok
}

// findSiLU finds z's two readers: the SiLU (na.y) and its gradient (na.dz,
// reading z and dy).
func (p *planner) findSiLU(na *normAct, z *G.Node, k fuseKit) bool {
	if !p.only(z, 2, k) {
		return false
	}
	for _, r := range k.cons[z.ID()] {
		if u, ok := r.Op().(UnaryKernelOp); ok && u.UnaryKernel() == OpSiLU {
			na.y = r
		}
		if g, ok := r.Op().(BinaryKernelOp); ok && g.BinaryKernel() == OpSiLUGrad {
			if ch := children(p.g.G, r); len(ch) == 2 && ch[0].ID() == z.ID() && ch[1].ID() != z.ID() {
				na.dz, na.dy = r, ch[1]
			}
		}
	}
	return na.y != nil && na.dz != nil
}

// matchNormSiLUGrad finds the gradient half: dz's readers are β's channel
// sum, rep(γ) ⊙ dz (read by the batch norm's gradient alone) and prod =
// x̂ ⊙ dz (γ's channel sum).
func (p *planner) matchNormSiLUGrad(na *normAct, prod *G.Node, k fuseKit) bool {
	if !p.only(na.dz, 3, k) {
		return false
	}
	var g1 *G.Node
	var sb []*G.Node
	seen := false
	for _, r := range k.cons[na.dz.ID()] {
		switch {
		case r.ID() == prod.ID():
			seen = true
		case kindOf(r) == "gorgonia.sumOp":
			sb = p.channelSum(r, na.dz, k)
		default:
			if op, ok := binOf(r); ok && op == OpMul {
				g1 = r
			}
		}
	}
	if !seen || sb == nil || g1 == nil || !p.pair(g1, na.scale, na.dz) || !p.pair(prod, na.xhat, na.dz) {
		return false
	}
	if !p.only(g1, 1, k) || !p.only(prod, 1, k) {
		return false
	}
	sg := p.channelSum(k.cons[prod.ID()][0], prod, k)
	dx := k.cons[g1.ID()][0]
	ng, ok := dx.Op().(NormGradOp)
	if sg == nil || !ok || ng.NormForward() != na.bn {
		return false
	}
	if ch := children(p.g.G, dx); len(ch) != 2 || ch[0].ID() != na.x.ID() || ch[1].ID() != g1.ID() {
		return false
	}
	na.dx, na.dbeta, na.dgamma, na.product = dx, sb[len(sb)-1], sg[len(sg)-1], g1
	na.bwd = append(append([]*G.Node{g1, prod, dx}, sb...), sg...)
	return true
}

// pair says whether n is a product of exactly a and b (either order).
func (p *planner) pair(n, a, b *G.Node) bool {
	ch := children(p.g.G, n)
	return len(ch) == 2 && (ch[0].ID() == a.ID() && ch[1].ID() == b.ID() || ch[0].ID() == b.ID() && ch[1].ID() == a.ID())
}

// channelSum follows a chain of sums of x (N×C×…) starting at s, each read
// by the next alone, that leaves only the channel axis; it returns the
// chain (nil if it is not one).
func (p *planner) channelSum(s, x *G.Node, k fuseKit) []*G.Node {
	rem := make([]int, len(x.Shape())) // x's axes not summed yet
	for d := range rem {
		rem[d] = d
	}
	var chain []*G.Node
	for cur := s; ; {
		along, ok := sumAxes(cur)
		if !ok || k.taken(cur) {
			return nil
		}
		drop := map[int]bool{}
		for _, a := range along {
			if a < 0 || a >= len(rem) {
				return nil
			}
			drop[a] = true
		}
		var keep []int
		for i, d := range rem {
			if !drop[i] {
				keep = append(keep, d)
			}
		}
		rem = keep
		chain = append(chain, cur)
		if len(rem) == 1 && rem[0] == 1 {
			return chain
		}
		if len(rem) < 1 || !p.only(cur, 1, k) {
			return nil
		}
		cur = k.cons[cur.ID()][0]
	}
}

// planNormSiLU adds a normAct's forward or backward step at anchor n (the
// i-th node).
func (p *planner) planNormSiLU(i int, n *G.Node, f *fusion, name string) {
	na := f.na
	be := p.be.(NormSiLUer)
	x, gm, bt := p.bufOf(na.x), p.bufOf(na.gamma), p.bufOf(na.beta)
	if f.kind == "normsilu" {
		nm, running, save, _ := p.normBufs(na.bn, na.xhat.Shape())
		nm.Part = p.parted[na.x.ID()]
		y := p.out(na.y)
		p.add(name, func() { be.NormSiLU(x, gm, bt, y, save, running, nm) })
		p.release(i, n)
		return
	}
	save, ok := p.bnSave[na.bn]
	if !ok {
		p.fail("%s: the batch norm's gradient has no forward batch norm", name)
		return
	}
	s := na.xhat.Shape()
	nm := Norm{N: s[0], C: s[1], HW: size(s[2:]), Part: p.parted[na.x.ID()]}
	dy := p.bufOf(na.dy)
	dz, dx, dg, db := p.out(na.dz), p.out(na.dx), p.out(na.dgamma), p.out(na.dbeta)
	p.add(name, func() { be.NormSiLUGrad(x, dy, gm, bt, save, dz, dx, dg, db, nm) })
	p.release(i, n)
}
