// Figure "attention-vs-seq" (web/figures/index.js): an engine curve; web/curves.js redraws it from the widget beside it.
import { chart, kTokens } from './line-chart.js';

/**
 * Long context: the attention matmuls' share of the forward FLOPs (causal mask) for two widths of model, and the
 * stored softmax output's share of the activations without FlashAttention, against the sequence length.
 */
export default function attentionVsSeq(engine) {
  const seqs = [1024, 4096, 16384, 65536, 131072];
  const flopShare = (model, seq) => {
    const { components } = engine.call('flops', { model, seq, attention_flops: 'causal' });
    return components
      .filter((c) => c.id === 'attn_scores' || c.id === 'attn_values')
      .reduce((sum, c) => sum + c.share, 0);
  };
  const scoreShare = (seq) => {
    const { activations } = engine.call('memory_budget', { model: 'llama-3-8b', seq, micro_batch: 1 });
    const scores = activations.terms.find((t) => t.id === 'softmax_output');
    return (scores.bytes * activations.layers) / activations.total_bytes;
  };
  return chart({
    label:
      "Attention's share of the forward FLOPs for Llama 3 8B and 405B, and the softmax output's share of Llama 3 8B's activations without FlashAttention, against sequence length",
    xLabel: 'sequence length (tokens, log scale)',
    yLabel: 'share',
    xLog: true,
    xFormat: kTokens,
    yFormat: (v) => `${Math.round(v * 100)}%`,
    series: [
      { name: 'FLOPs, Llama 3 8B', points: seqs.map((s) => [s, flopShare('llama-3-8b', s)]) },
      { name: 'FLOPs, Llama 3 405B', points: seqs.map((s) => [s, flopShare('llama-3-405b', s)]) },
      { name: 'memory, 8B, no FlashAttention', points: seqs.map((s) => [s, scoreShare(s)]) },
    ],
  });
}
