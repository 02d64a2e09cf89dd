// The <wbr> break points the docs tables put in long names (generator/site/break-points.ts): after separators,
// between two parts only, with everything else escaped.
import { describe, expect, it } from 'vitest';
import { FIELD_SEPARATORS, withBreakPoints } from '../generator/site/break-points.ts';

describe('withBreakPoints', () => {
  it('breaks a dotted field name after its dots and after "[]." only', () => {
    expect(
      withBreakPoints('teacher_brain.metrics.calibration[].mean_forecast_probability', FIELD_SEPARATORS),
    ).toBe('teacher_brain.<wbr>metrics.<wbr>calibration[].<wbr>mean_forecast_probability');
    expect(withBreakPoints('latest_lessons[]', FIELD_SEPARATORS)).toBe('latest_lessons[]');
    expect(withBreakPoints('success', FIELD_SEPARATORS)).toBe('success');
  });

  it('breaks a path after / . - and _, never after its leading slash or at its end', () => {
    expect(withBreakPoints('/api/x402-market-regime.php')).toBe(
      '/api/<wbr>x402-<wbr>market-<wbr>regime.<wbr>php',
    );
    expect(withBreakPoints('/arena/get_shared_intelligence.php')).toBe(
      '/arena/<wbr>get_<wbr>shared_<wbr>intelligence.<wbr>php',
    );
    expect(withBreakPoints('market_regime')).toBe('market_<wbr>regime');
    expect(withBreakPoints('/x402-buyer/')).toBe('/x402-<wbr>buyer/');
  });

  it('escapes the text, so nothing in it becomes markup', () => {
    expect(withBreakPoints('<b>a.b</b> & "c"', FIELD_SEPARATORS)).toBe(
      '&lt;b&gt;a.<wbr>b&lt;/b&gt; &amp; &quot;c&quot;',
    );
    expect(withBreakPoints(null)).toBe('');
    expect(withBreakPoints(42)).toBe('42');
  });

  it('leaves the text as it was once the break points are taken out', () => {
    const name = 'a.b-c_d/e[].f';
    expect(withBreakPoints(name).replaceAll('<wbr>', '')).toBe(name);
  });
});
