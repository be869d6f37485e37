import { useEffect, useState } from 'react';
import { InputHelperText, useInput, type Validator } from 'react-admin';
import { InputAdornment, TextField } from '@mui/material';
import { useWatch } from 'react-hook-form';
import { currencySymbol, DEFAULT_CURRENCY, minorDigits, parseDecimal, toDecimalText } from './amounts.js';

interface AmountInputProps {
  source: string;
  label: string;
  kind: 'money' | 'percent';
  id?: string;
  helperText?: string | false;
  validate?: Validator[];
  defaultValue?: unknown;
  /** For filters, which have no record: the currency to show (the record's `currency` field otherwise). */
  currency?: string;
}

const notAnAmount: Validator = (value: unknown) => (typeof value === 'string' ? 'Enter a number, such as 19.99' : undefined);

/**
 * An integer amount typed as a person writes it: money (`x-money`) in the record's currency, 19.99 stored as
 * 1999; a percentage (`x-percent-basis-points`), 19 stored as 1900. The text is the user's while they type; the
 * form holds the integer (or the text itself while it is not a number, which the form refuses).
 */
export function AmountInput({ source, label, kind, id, helperText, validate = [], defaultValue, currency }: AmountInputProps) {
  const recordCurrency = useWatch({ name: 'currency' }) as unknown;
  const code = currency ?? (typeof recordCurrency === 'string' && /^[A-Z]{3}$/.test(recordCurrency) ? recordCurrency : DEFAULT_CURRENCY);
  const digits = kind === 'money' ? minorDigits(code) : 2;
  const { field, fieldState, isRequired, id: inputId } = useInput({ source, id, validate: [notAnAmount, ...validate], defaultValue });
  // Money with all its decimals (12.50), a percentage without trailing zeros (19, 7.5).
  const asText = (value: unknown) => {
    if (typeof value !== 'number') return typeof value === 'string' ? value : '';
    const text = toDecimalText(value, digits);
    return kind === 'percent' && text.includes('.') ? text.replace(/\.?0+$/, '') : text;
  };
  const [text, setText] = useState(() => asText(field.value));
  // A value set from outside (a reset, a reload, another currency): show it.
  useEffect(() => {
    if (typeof field.value === 'string') return;
    if (parseDecimal(text, digits) !== field.value) setText(asText(field.value));
  }, [field.value, digits]);
  const error = fieldState.invalid ? fieldState.error?.message : undefined;
  return (
    <TextField
      id={inputId} name={field.name} label={label} required={isRequired} size="small" margin="dense"
      sx={{ minWidth: 200 }} value={text} inputRef={field.ref} error={Boolean(error)}
      onChange={(e) => {
        setText(e.target.value);
        const units = parseDecimal(e.target.value, digits);
        field.onChange(e.target.value.trim() === '' ? null : units ?? e.target.value);
      }}
      onBlur={() => {
        if (typeof field.value === 'number') setText(asText(field.value));
        field.onBlur();
      }}
      slotProps={{
        htmlInput: { inputMode: 'decimal' },
        input: kind === 'money'
          ? { startAdornment: <InputAdornment position="start">{currencySymbol(code)}</InputAdornment> }
          : { endAdornment: <InputAdornment position="end">%</InputAdornment> },
      }}
      helperText={<InputHelperText error={error} helperText={helperText} />}
    />
  );
}
