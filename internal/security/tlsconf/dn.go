package tlsconf

import (
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"
)

// attrTypeAndValue keeps the attribute value's raw encoding, so an attribute without an RFC 2253
// keyword can be printed as #hex of its DER, as Java does.
type attrTypeAndValue struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

// attrSET is one RDN (a SET OF attributes; asn1 treats a type named …SET as a SET).
type attrSET []attrTypeAndValue

// rfc2253Keywords are the attribute keywords Java's X500Principal.getName(RFC2253) prints; every
// other attribute is printed as its dotted OID with a #hex value.
var rfc2253Keywords = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"2.5.4.9":                    "STREET",
	"0.9.2342.19200300.100.1.25": "DC",
	"0.9.2342.19200300.100.1.1":  "UID",
}

// DistinguishedName is a certificate subject in RFC 2253 form as Kafka's
// DefaultKafkaPrincipalBuilder sees it (X500Principal.getName()): the most specific RDN first,
// Java's keyword table, RFC 2253 escaping. It is built from the raw subject, since Go's
// pkix.Name.String() reorders attributes and uses other keywords.
func DistinguishedName(cert *x509.Certificate) (string, error) {
	return formatDN(cert.RawSubject)
}

func formatDN(raw []byte) (string, error) {
	var seq []attrSET
	rest, err := asn1.Unmarshal(raw, &seq)
	if err != nil {
		return "", fmt.Errorf("certificate subject: %w", err)
	}
	if len(rest) > 0 {
		return "", fmt.Errorf("certificate subject: trailing data")
	}
	var b strings.Builder
	for i := len(seq) - 1; i >= 0; i-- {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		for j, atv := range seq[i] {
			if j > 0 {
				b.WriteByte('+')
			}
			kw, ok := rfc2253Keywords[atv.Type.String()]
			s, isString := attrString(atv.Value)
			if ok && isString {
				b.WriteString(kw)
				b.WriteByte('=')
				b.WriteString(escapeValue(s))
				continue
			}
			if ok {
				b.WriteString(kw)
			} else {
				b.WriteString(atv.Type.String())
			}
			b.WriteString("=#")
			b.WriteString(hex.EncodeToString(atv.Value.FullBytes))
		}
	}
	return b.String(), nil
}

// attrString decodes a directory string value (PrintableString, UTF8String, IA5String,
// TeletexString, BMPString, NumericString).
func attrString(v asn1.RawValue) (string, bool) {
	if v.Class != asn1.ClassUniversal {
		return "", false
	}
	switch v.Tag {
	case asn1.TagPrintableString, asn1.TagUTF8String, asn1.TagIA5String, asn1.TagT61String, asn1.TagNumericString:
		if !utf8.Valid(v.Bytes) {
			return "", false
		}
		return string(v.Bytes), true
	case asn1.TagBMPString:
		if len(v.Bytes)%2 != 0 {
			return "", false
		}
		r := make([]rune, 0, len(v.Bytes)/2)
		for i := 0; i < len(v.Bytes); i += 2 {
			r = append(r, rune(v.Bytes[i])<<8|rune(v.Bytes[i+1]))
		}
		return string(r), true
	}
	return "", false
}

// escapeValue applies RFC 2253 section 2.4: a backslash before , + " \ < > ;, before a leading #
// or space and before a trailing space.
func escapeValue(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ',' || c == '+' || c == '"' || c == '\\' || c == '<' || c == '>' || c == ';',
			i == 0 && (c == '#' || c == ' '),
			i == len(s)-1 && c == ' ':
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}
