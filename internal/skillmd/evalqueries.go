package skillmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// EvalQueriesFile is the Agent Skills file of a skill's triggering evals,
// beside its SKILL.md: [{"query": "...", "should_trigger": true|false}].
const EvalQueriesFile = "eval_queries.json"

// Bounds of an eval_queries.json. A query is one SearchSkills query, so it
// is bounded as one; the count bounds what a publish runs.
const (
	MaxEvalQueries     = 50
	MaxEvalQueryBytes  = 4096 // the default --skills.max-query-bytes
	maxEvalQueriesSize = MaxEvalQueries * (MaxEvalQueryBytes + 64)
)

// EvalDepth is how deep a publish's triggering eval looks: a skill ranked
// past it is not retrieved (TriggerEval.rank 0).
const EvalDepth = 10

// RuleEvalQueries: eval_queries.json is not what the Agent Skills docs
// define. Only a warning: the skill is served without its evals.
const RuleEvalQueries = "eval-queries"

// EvalQuery is one triggering eval: a task, and whether the skill should be
// the one chosen for it.
type EvalQuery struct {
	Query         string `json:"query"`
	ShouldTrigger bool   `json:"should_trigger"`
}

// ParseEvalQueries reads an eval_queries.json. A file that breaks the
// format gives no queries and one warning naming the problem (the skill
// is still valid); queries past MaxEvalQueries are left out with a
// warning.
func ParseEvalQueries(data []byte) ([]EvalQuery, []Problem) {
	warn := func(format string, a ...any) []Problem {
		return []Problem{{Severity: SeverityWarning, File: EvalQueriesFile, Rule: RuleEvalQueries,
			Message: EvalQueriesFile + ": " + fmt.Sprintf(format, a...) + `; want [{"query": "...", "should_trigger": true|false}]`}}
	}
	if len(data) > maxEvalQueriesSize {
		return nil, warn("the file is %d bytes, at most %d are read", len(data), maxEvalQueriesSize)
	}
	if !utf8.Valid(data) {
		return nil, warn("the file is not UTF-8")
	}
	var raw []struct {
		Query         *string `json:"query"`
		ShouldTrigger *bool   `json:"should_trigger"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		return nil, warn("%s", jsonProblem(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, warn("text follows the array")
	}
	var out []EvalQuery
	for i, r := range raw {
		switch {
		case r.Query == nil || *r.Query == "":
			return nil, warn("entry %d has no query", i+1)
		case len(*r.Query) > MaxEvalQueryBytes:
			return nil, warn("the query of entry %d is %d bytes, at most %d are allowed", i+1, len(*r.Query), MaxEvalQueryBytes)
		case r.ShouldTrigger == nil:
			return nil, warn("entry %d has no should_trigger", i+1)
		}
		out = append(out, EvalQuery{Query: *r.Query, ShouldTrigger: *r.ShouldTrigger})
	}
	if len(out) > MaxEvalQueries {
		return out[:MaxEvalQueries], []Problem{{Severity: SeverityWarning, File: EvalQueriesFile, Rule: RuleEvalQueries, Value: fmt.Sprint(len(out)),
			Message: fmt.Sprintf("%s: %d queries, only the first %d are run", EvalQueriesFile, len(out), MaxEvalQueries)}}
	}
	return out, nil
}

// jsonProblem words a decoding error without echoing the file's text.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("not JSON (at byte %d)", syn.Offset)
	case errors.As(err, &typ):
		if typ.Field != "" {
			return fmt.Sprintf("%s must be a %s, not a %s", typ.Field, kindOf(typ.Field), typ.Value)
		}
		return fmt.Sprintf("the file must be an array of objects, not a %s", typ.Value)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the file is empty or cut short"
	}
	return "not an array of queries"
}

func kindOf(field string) string {
	if field == "should_trigger" {
		return "boolean"
	}
	return "string"
}
