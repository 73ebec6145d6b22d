// The pitfall museum's one table: each row is one exhibit, {id, title, mistake, fix, exhibit}:
//   id       the name of its xenc::pitfalls::Pitfall value
//   title    one line: the mistake (the grader's hint names it)
//   mistake  what the buggy code does
//   fix      what to write instead
//   exhibit  the function(s) of xenc/grade/pitfalls.hpp that compute what the buggy code computes
// An X-macro table: a user defines XENC_PITFALL(id, title, mistake, fix, exhibit), includes this
// file, and undefines it (pitfalls.hpp makes the enum from it, pitfalls.cpp describe() and
// all_pitfalls()). Adding an exhibit: a row here and its function in pitfalls.hpp/.cpp.
// (No include guard: it is included once per use.)
XENC_PITFALL(
    pe_doubled_exponent, "exponent 2*i when i already steps by 2",
    "the loop `for (i = 0; i < D; i += 2)` uses 10000^(2*i/D): i already is the even dimension "
    "2k, so the exponent is 4k/D and the frequencies fall twice as fast",
    "use 10000^(i/D) when i steps by 2 over dimensions, or loop k = 0 .. D/2-1 over pairs with "
    "10000^(2k/D): PE(p, 2k) = sin(p / 10000^(2k/D)), PE(p, 2k+1) = cos(p / 10000^(2k/D))",
    "pe_doubled_exponent")
XENC_PITFALL(pe_batch_axis, "positions added along the batch axis",
             "`x + pe[:x.size(0)]` on a batch-first [B, T, D] tensor adds PE(b) to every token of "
             "sentence b",
             "add PE(t) to token t: y[b, t] = x[b, t] + PE(t) (pe[:T] broadcast over the batch)",
             "BatchAxisPosition, add_positions_along_batch")
XENC_PITFALL(
    pe_odd_d_overflow, "odd D writes past the row's end",
    "ceil(D/2) frequencies each write a cos column 2i+1; for odd D the last one is column D, "
    "one past the end of the row",
    "check that D is even and throw (xenc::config_error) before building the table",
    "pe_odd_d_unchecked")
XENC_PITFALL(
    layer_norm_unbiased_variance, "layer norm with the unbiased variance",
    "the variance divides by D - 1 (x.var(), x.std() are unbiased in PyTorch), which shrinks "
    "every output by sqrt((D-1)/D)",
    "divide by D: var = Σ (x - mean)² / D (the biased variance, as torch.nn.LayerNorm)",
    "layer_norm_unbiased_variance")
XENC_PITFALL(layer_norm_eps_outside_sqrt, "layer norm with eps outside the square root",
             "(x - mean) / (sqrt(var) + eps): rows with a variance near or below eps are no longer "
             "tamed and blow up",
             "put eps inside the root: (x - mean) / sqrt(var + eps)", "layer_norm_eps_outside_sqrt")
XENC_PITFALL(
    layer_norm_unbiased_std_eps_outside,
    "layer norm with the unbiased std and eps outside the root",
    "(x - mean) / (x.std() + eps): the unbiased std divides by D - 1 and eps sits outside "
    "the square root",
    "use the biased variance with eps inside the root: (x - mean) / sqrt(Σ (x - mean)² / D + "
    "eps)",
    "layer_norm_unbiased_std_eps_outside (both at once)")
XENC_PITFALL(
    layer_norm_backward_no_mean_terms, "layer norm backward without the mean terms",
    "dx = rstd · dy · weight treats mean and rstd as constants, but both depend on every x "
    "of the row",
    "with g = dy · weight and x̂ = (x - mean) · rstd: dx = rstd · (g - mean(g) - x̂ · mean(g · "
    "x̂)), means over the row",
    "layer_norm_backward_no_mean_terms")
XENC_PITFALL(
    softmax_without_max, "softmax without the max subtraction",
    "exp(x) / Σ exp(x) overflows: exp(x) is inf for x > 88.7 in float32, and inf / inf is NaN",
    "subtract the row maximum first: y = exp(x - max(x)) / Σ exp(x - max(x)) (the same value, "
    "and every exp is then at most 1)",
    "softmax_without_max")
XENC_PITFALL(
    mask_inverted, "a padding mask with the opposite truth convention",
    "the mask is read as true = keep (Hugging Face's attention_mask), but key_padding_mask "
    "has true = padding (PyTorch): the real tokens are masked and the padding is attended",
    "mask the keys where key_padding_mask[b, j] is true: S[i, j] = -inf for those j",
    "keep_mask_from_lengths, attention_inverted_mask")
XENC_PITFALL(mask_after_softmax, "the mask applied after the softmax",
             "softmax over all keys, then the padding weights set to 0: the remaining weights no "
             "longer sum to 1 and the padding still took its share",
             "mask the scores before the softmax: S[i, j] = -inf for padding keys j, then P = "
             "softmax(S) (masked weights are exactly 0 and each row sums to 1)",
             "attention_mask_after_softmax")
XENC_PITFALL(attention_without_scale, "attention scores without 1/sqrt(Dh)",
             "S = Q Kᵀ without the scale: the scores' spread grows like sqrt(Dh) and the softmax "
             "saturates",
             "divide the scores by sqrt(Dh), the head dimension: S = Q Kᵀ / sqrt(Dh)",
             "attention_without_scale")
XENC_PITFALL(
    split_heads_without_transpose, "heads split by a reshape without the transpose",
    "[B, T, D] viewed straight as [B, H, T, Dh] gives each head a slab of consecutive tokens "
    "instead of a slice of dimensions",
    "view as [B, T, H, Dh] first, then swap the T and H axes: out[b, h, t, e] = x[b, t, h·Dh "
    "+ e]",
    "split_heads_without_transpose")
XENC_PITFALL(
    merge_heads_without_transpose, "heads merged by a reshape without the transpose",
    "[B, H, T, Dh] viewed straight as [B, T, D] mixes tokens and heads",
    "swap the H and T axes back first ([B, T, H, Dh]), then view as [B, T, D]: out[b, t, h·Dh "
    "+ e] = x[b, h, t, e]",
    "merge_heads_without_transpose")
XENC_PITFALL(
    linear_backward_bias_mean, "bias gradient averaged instead of summed",
    "db = mean over rows of dy; but the bias is added to every row, so each row contributes "
    "its full gradient",
    "sum over rows: db[o] = Σ_n dy[n, o]", "linear_backward_bias_mean")
XENC_PITFALL(cross_entropy_counts_ignored,
             "cross-entropy averaged over all rows, ignored ones included",
             "the ignored rows' terms are skipped but the sum is still divided by N, the number of "
             "all rows",
             "divide by N', the number of rows whose target is not ignore_index (the gradient too)",
             "cross_entropy_counts_ignored(_backward)")
XENC_PITFALL(
    rope_rotate_half, "RoPE with the \"rotate half\" pairing where the interleaved one is asked",
    "column i is rotated with column i + Dh/2 (GPT-NeoX, Hugging Face LLaMA's rotate_half), "
    "but RoFormer's pairs are the neighbours (2i, 2i+1); norms and relative scores are still "
    "kept, so only values show it",
    "rotate the pairs (x[2i], x[2i+1]) with angle p · θ_i: y[2i] = x[2i] cos a - x[2i+1] sin "
    "a, "
    "y[2i+1] = x[2i] sin a + x[2i+1] cos a",
    "rope_rotate_half")
XENC_PITFALL(
    rope_exponent_without_2, "RoPE frequencies 10000^(-i/Dh), the 2 of 2i/Dh dropped",
    "θ_i = 10000^(-i/Dh) makes the frequencies fall half as fast as the formula's: pair i "
    "turns as fast as pair i/2 should",
    "θ_i = 10000^(-2i/Dh) for pair i = 0 .. Dh/2 - 1 (the exponent of the sinusoidal table, "
    "with D = Dh)",
    "rope_exponent_without_2")
XENC_PITFALL(
    rope_clockwise, "RoPE rotating clockwise (the sign of sin flipped)",
    "y[2i] = x[2i] cos a + x[2i+1] sin a, y[2i+1] = -x[2i] sin a + x[2i+1] cos a is the "
    "rotation by -a (R(a) transposed, the backward's matrix)",
    "rotate counter-clockwise: y[2i] = x[2i] cos a - x[2i+1] sin a, y[2i+1] = x[2i] sin a + "
    "x[2i+1] cos a (the minus sign on the first row)",
    "rope_clockwise")
XENC_PITFALL(
    rope_positions_from_one, "RoPE positions counted from 1",
    "the token at position p is rotated by (p + 1) · θ_i (a 1-based count), so position 0 is "
    "no longer the identity; relative scores hide it",
    "count positions from 0: the angle is p · θ_i with the position p as given (position 0 "
    "leaves the vector unchanged)",
    "rope_positions_from_one")
XENC_PITFALL(alibi_start_2_pow_minus_8, "ALiBi slopes starting at 2^(-8) instead of 2^(-8/H)",
             "the geometric sequence starts (and, ratio = start, steps) at 2^(-8), the smallest "
             "slope, so m_h = 2^(-8(h+1)) and every head but the first ignores distance",
             "start at 2^(-8/H) with the same ratio: m_h = 2^(-8(h+1)/H) (H = 8: 1/2, 1/4, ..., "
             "1/256)",
             "alibi_slopes_start_2_pow_minus_8")
XENC_PITFALL(
    alibi_plain_formula, "ALiBi slopes for H not a power of two computed with the plain formula",
    "m_h = 2^(-8(h+1)/H) for every H; the paper's rule for other H is different",
    "for H not a power of two, take the n slopes of n = the largest power of two below H, then "
    "every other slope of the 2n sequence (2^(-8·1/(2n)), 2^(-8·3/(2n)), ...) until there are "
    "H",
    "alibi_slopes_plain_formula")
XENC_PITFALL(attention_scale_by_dh, "attention scores divided by Dh instead of sqrt(Dh)",
             "S = Q Kᵀ / Dh scales the scores by 1/Dh, the square of the right factor: the softmax "
             "comes out too flat, more so the wider the head",
             "divide the scores by sqrt(Dh): S = Q Kᵀ / sqrt(Dh) (std::sqrt of the head dimension)",
             "attention_scale_by_dh")
XENC_PITFALL(
    pe_sin_cos_swapped, "sin and cos swapped in the sinusoidal table",
    "the even columns hold cos and the odd ones sin: PE(p, 2i) = cos(p ω_i), PE(p, 2i+1) = "
    "sin(p ω_i), so position 0 is [1, 0, 1, 0, ...] instead of [0, 1, 0, 1, ...]",
    "sin in column 2i and cos in column 2i+1: PE(p, 2i) = sin(p / 10000^(2i/D)), PE(p, 2i+1) = "
    "cos(p / 10000^(2i/D))",
    "pe_sin_cos_swapped")
XENC_PITFALL(
    softmax_wrong_axis, "softmax over the wrong axis",
    "each column is normalised over the rows (dim=0 where dim=-1 was meant): the columns "
    "sum to 1, the rows do not",
    "normalise each row over its own entries, the last axis: y[r, c] = exp(x[r, c] - max_r) / "
    "Σ_c' exp(x[r, c'] - max_r)",
    "softmax_wrong_axis")
XENC_PITFALL(
    rope_doubled_exponent, "RoPE frequencies 10000^(-4i/Dh), the exponent doubled",
    "θ_i = 10000^(-2·(2i)/Dh): the 2i of a loop over even columns doubled once more, so the "
    "frequencies fall twice as fast as the formula's",
    "θ_i = 10000^(-2i/Dh) for pair i = 0 .. Dh/2 - 1 (or 10000^(-j/Dh) when j steps over the "
    "even columns 0, 2, 4, ...)",
    "rope_doubled_exponent")
XENC_PITFALL(
    online_softmax_acc_not_rescaled, "online softmax: the partial output not rescaled",
    "when a tile raises the running maximum from m to m', l is multiplied by exp(m - m') but "
    "acc is not: the old tiles' terms stay in the old base and outweigh the new ones",
    "rescale both by the same factor before adding the tile: c = exp(m - m'), l' = c·l + "
    "Σ exp(s - m'), acc' = c·acc + Σ exp(s - m')·v",
    "online_softmax_acc_not_rescaled")
XENC_PITFALL(
    online_softmax_sum_wrong_factor,
    "online softmax: the running sum rescaled by the inverted factor",
    "l is multiplied by exp(m' - m) instead of exp(m - m'): the old terms are moved the wrong "
    "way, l grows when the maximum rises, and acc / l comes out too small",
    "the factor that moves a term from base m to base m' is exp(m - m') (at most 1): "
    "exp(s - m) · exp(m - m') = exp(s - m')",
    "online_softmax_sum_wrong_factor")
XENC_PITFALL(
    online_softmax_old_max, "online softmax: the new maximum used before it is computed",
    "the tile's exponentials exp(s - m) are taken against the old maximum m, before the "
    "tile's own scores have been folded into it: on the first tile m = -inf gives inf, and a "
    "tile that raises the maximum gets weights too large by exp(m' - m)",
    "first m' = max(m, max_j s_j) over the whole tile, then c = exp(m - m'), then the tile's "
    "terms exp(s_j - m') in the new base",
    "online_softmax_old_max")
