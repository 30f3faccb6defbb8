//! A peephole pass that shortens a classic BPF program without changing any answer.
//!
//! seccompiler reaches its answers through chains of unconditional jumps and leaves
//! instructions that no path runs (a rule table of 75 calls refused outright came out as
//! 7 instructions a call where 1 does). The kernel converts, verifies and JIT-compiles
//! every instruction of the program at each sandbox start, for about 0.4 µs each on the
//! machines fence is measured on; the pass took the fenced program from 1,640 instructions
//! to about half. Written here because no maintained crate rewrites classic BPF
//! (seccompiler emits it; libseccomp, in C, optimises its own programs only).
//!
//! What it does, each step keeping every path's answer:
//! - an unconditional jump whose chain of unconditional jumps ends at a `ret` becomes
//!   that `ret`; one that ends elsewhere jumps there directly;
//! - a conditional jump's branches skip chains of unconditional jumps, where the new
//!   distance fits in its 8-bit offset; a conditional jump whose two branches end at the
//!   same place, or at `ret`s of the same value, becomes a jump there or that `ret` (a
//!   comparison changes nothing but the path);
//! - instructions that no path from the first reaches are removed, and the offsets are
//!   recomputed (they only shrink, so every 8-bit offset still fits).
//!
//! A program with a jump out of range or an instruction falling off the end is returned
//! unchanged: the kernel refuses it, and that refusal names the real fault.

const CLASS_MASK: u16 = 0x07;
const OP_MASK: u16 = 0xf0;
const BPF_JMP: u16 = 0x05;
const BPF_RET: u16 = 0x06;
const BPF_JA: u16 = 0x00;

/// One instruction with its successors as absolute indexes.
#[derive(Clone, Copy)]
enum Node {
    /// `ret`: ends the program.
    Ret(libc::sock_filter),
    /// Unconditional jump.
    Jump(usize),
    /// Conditional jump: reads the accumulator (or index register), changes nothing else.
    Branch {
        insn: libc::sock_filter,
        on_true: usize,
        on_false: usize,
    },
    /// Any other instruction (load, store, arithmetic): falls through to the next.
    Step(libc::sock_filter),
}

fn same_ret(a: &libc::sock_filter, b: &libc::sock_filter) -> bool {
    a.code == b.code && a.k == b.k
}

/// The program with its jumps resolved to absolute indexes, or `None` when a jump leaves
/// the program or an instruction other than `ret` or a jump is the last.
fn decode(program: &[libc::sock_filter]) -> Option<Vec<Node>> {
    let len = program.len();
    program
        .iter()
        .enumerate()
        .map(|(pc, insn)| {
            let within = |offset: usize| (pc + 1 + offset < len).then_some(pc + 1 + offset);
            Some(match insn.code & CLASS_MASK {
                BPF_RET => Node::Ret(*insn),
                BPF_JMP if insn.code & OP_MASK == BPF_JA => Node::Jump(within(insn.k as usize)?),
                BPF_JMP => Node::Branch {
                    insn: *insn,
                    on_true: within(insn.jt.into())?,
                    on_false: within(insn.jf.into())?,
                },
                _ => {
                    within(0)?;
                    Node::Step(*insn)
                }
            })
        })
        .collect()
}

/// Where a path arriving at `at` goes once past unconditional jumps (all jumps point
/// forward, so the walk ends).
fn settle(nodes: &[Node], mut at: usize) -> usize {
    while let Node::Jump(next) = nodes[at] {
        at = next;
    }
    at
}

/// Shortens `program` (see the module's comment); the answer for every input is unchanged.
pub fn shorten(program: Vec<libc::sock_filter>) -> Vec<libc::sock_filter> {
    let Some(mut nodes) = decode(&program).filter(|n| !n.is_empty()) else {
        return program;
    };
    // Rewrites until nothing changes: each rewrite removes a jump or moves a target
    // forward, so this ends.
    let mut changed = true;
    while changed {
        changed = false;
        for pc in 0..nodes.len() {
            let new = match nodes[pc] {
                Node::Jump(target) => {
                    let end = settle(&nodes, target);
                    match nodes[end] {
                        Node::Ret(r) => Some(Node::Ret(r)),
                        _ if end != target => Some(Node::Jump(end)),
                        _ => None,
                    }
                }
                Node::Branch {
                    insn,
                    on_true,
                    on_false,
                } => {
                    let (t, f) = (settle(&nodes, on_true), settle(&nodes, on_false));
                    match (nodes[t], nodes[f]) {
                        (Node::Ret(a), Node::Ret(b)) if same_ret(&a, &b) => Some(Node::Ret(a)),
                        _ if t == f => Some(Node::Jump(t)),
                        _ => {
                            // An 8-bit offset reaches 255 instructions ahead; removing
                            // instructions later only brings the target closer.
                            let fits = |to: usize| to - pc - 1 <= u8::MAX as usize;
                            let t = if fits(t) { t } else { on_true };
                            let f = if fits(f) { f } else { on_false };
                            (t != on_true || f != on_false).then_some(Node::Branch {
                                insn,
                                on_true: t,
                                on_false: f,
                            })
                        }
                    }
                }
                Node::Ret(_) | Node::Step(_) => None,
            };
            if let Some(new) = new {
                nodes[pc] = new;
                changed = true;
            }
        }
    }
    // Keep what a path from the first instruction reaches. Successors lie ahead, so one
    // forward sweep marks everything.
    let mut reached = vec![false; nodes.len()];
    reached[0] = true;
    for pc in 0..nodes.len() {
        if !reached[pc] {
            continue;
        }
        match nodes[pc] {
            Node::Ret(_) => {}
            Node::Jump(t) => reached[t] = true,
            Node::Branch {
                on_true, on_false, ..
            } => {
                reached[on_true] = true;
                reached[on_false] = true;
            }
            Node::Step(_) => reached[pc + 1] = true,
        }
    }
    let mut index = vec![usize::MAX; nodes.len()];
    let mut next = 0;
    for pc in 0..nodes.len() {
        if reached[pc] {
            index[pc] = next;
            next += 1;
        }
    }
    let offset = |from: usize, to: usize| index[to] - index[from] - 1;
    (0..nodes.len())
        .filter(|&pc| reached[pc])
        .map(|pc| match nodes[pc] {
            Node::Ret(r) => r,
            Node::Step(s) => s,
            Node::Jump(t) => crate::seccomp_filters::stmt(BPF_JMP | BPF_JA, offset(pc, t) as u32),
            Node::Branch {
                insn,
                on_true,
                on_false,
            } => libc::sock_filter {
                // Offsets were at most 255 before and only shrank.
                jt: offset(pc, on_true) as u8,
                jf: offset(pc, on_false) as u8,
                ..insn
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seccomp_filters::{jump, stmt};

    const LD_ABS: u16 = 0x20;
    const JEQ: u16 = BPF_JMP | 0x10;
    const RET: u16 = BPF_RET;
    const JA: u16 = BPF_JMP;

    fn codes(p: &[libc::sock_filter]) -> Vec<(u16, u8, u8, u32)> {
        p.iter().map(|i| (i.code, i.jt, i.jf, i.k)).collect()
    }

    #[test]
    fn a_call_refused_outright_is_one_ret() {
        // seccompiler's shape for one call with no conditions, its number already known.
        let p = vec![
            stmt(JA, 1),
            stmt(JA, 2),
            stmt(RET, 0x50001),
            stmt(RET, 0x7fff0000),
            stmt(RET, 0x7fff0000),
        ];
        assert_eq!(codes(&shorten(p)), vec![(RET, 0, 0, 0x50001)]);
    }

    #[test]
    fn branches_skip_jump_chains_and_dead_code_goes() {
        let p = vec![
            stmt(LD_ABS, 16),
            jump(JEQ, 7, 0, 1), // true: 2, false: 3
            stmt(JA, 1),        // -> 4
            stmt(JA, 2),        // -> 6
            stmt(RET, 1),
            stmt(RET, 99), // unreached
            stmt(RET, 2),
        ];
        let out = shorten(p);
        assert_eq!(
            codes(&out),
            vec![
                (LD_ABS, 0, 0, 16),
                (JEQ, 0, 1, 7),
                (RET, 0, 0, 1),
                (RET, 0, 0, 2)
            ]
        );
    }

    #[test]
    fn a_branch_to_equal_answers_is_that_answer() {
        let p = vec![
            stmt(LD_ABS, 16),
            jump(JEQ, 7, 0, 1),
            stmt(RET, 5),
            stmt(RET, 5),
        ];
        assert_eq!(codes(&shorten(p)), vec![(LD_ABS, 0, 0, 16), (RET, 0, 0, 5)]);
    }

    #[test]
    fn a_far_target_keeps_its_hop() {
        // The branch's true side leads through a jump to an instruction 300 ahead, out of
        // reach of an 8-bit offset (judged before dead code goes): the hop stays.
        let mut p = vec![
            stmt(LD_ABS, 16),
            jump(JEQ, 7, 0, 1), // true: 2, false: 3
            stmt(JA, 299),      // -> 302
            stmt(RET, 1),
        ];
        p.extend((4..302).map(|_| stmt(LD_ABS, 24))); // unreached
        p.push(stmt(LD_ABS, 20)); // 302
        p.push(stmt(RET, 3));
        assert_eq!(
            codes(&shorten(p)),
            vec![
                (LD_ABS, 0, 0, 16),
                (JEQ, 0, 1, 7),
                (JA, 0, 0, 1),
                (RET, 0, 0, 1),
                (LD_ABS, 0, 0, 20),
                (RET, 0, 0, 3)
            ]
        );
    }

    #[test]
    fn malformed_programs_are_left_alone() {
        let out_of_range = vec![stmt(JA, 5), stmt(RET, 0)];
        assert_eq!(codes(&shorten(out_of_range.clone())), codes(&out_of_range));
        let falls_off = vec![stmt(LD_ABS, 0)];
        assert_eq!(codes(&shorten(falls_off.clone())), codes(&falls_off));
        assert!(shorten(Vec::new()).is_empty());
    }
}
