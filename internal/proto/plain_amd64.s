//go:build !purego

#include "textflag.h"

// func plainBlocks(b []byte) int
//
// A byte c is plain when c > 0x1f as a signed byte (so neither a control character nor
// a byte of 0x80 or more) and c is neither '"' nor '\\'. Thirty-two bytes per step
// while all are plain, then one step of sixteen.
TEXT ·plainBlocks(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	XORQ AX, AX
	MOVQ $0x1f1f1f1f1f1f1f1f, DX
	MOVQ DX, X1
	PUNPCKLQDQ X1, X1
	MOVQ $0x2222222222222222, DX
	MOVQ DX, X2
	PUNPCKLQDQ X2, X2
	MOVQ $0x5c5c5c5c5c5c5c5c, DX
	MOVQ DX, X3
	PUNPCKLQDQ X3, X3

loop32:
	LEAQ 32(AX), DX
	CMPQ DX, CX
	JHI  tail16
	MOVOU (SI)(AX*1), X0
	MOVOU 16(SI)(AX*1), X6
	// X4 = first half > 0x1f; X0 = first half is '"' or '\\'; X0 = X4 &^ X0.
	MOVO    X0, X4
	PCMPGTB X1, X4
	MOVO    X0, X5
	PCMPEQB X2, X5
	PCMPEQB X3, X0
	POR     X5, X0
	PANDN   X4, X0
	// The same for the second half, into X6.
	MOVO    X6, X7
	PCMPGTB X1, X7
	MOVO    X6, X5
	PCMPEQB X2, X5
	PCMPEQB X3, X6
	POR     X5, X6
	PANDN   X7, X6
	PAND     X6, X0
	PMOVMSKB X0, DX
	CMPL     DX, $0xffff
	JNE      tail16
	ADDQ     $32, AX
	JMP      loop32

tail16:
	LEAQ 16(AX), DX
	CMPQ DX, CX
	JHI  done
	MOVOU   (SI)(AX*1), X0
	MOVO    X0, X4
	PCMPGTB X1, X4
	MOVO    X0, X5
	PCMPEQB X2, X5
	PCMPEQB X3, X0
	POR     X5, X0
	PANDN   X4, X0
	PMOVMSKB X0, DX
	CMPL     DX, $0xffff
	JNE      done
	ADDQ     $16, AX

done:
	MOVQ AX, ret+24(FP)
	RET
