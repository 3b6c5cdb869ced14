package main

// check --contract FILE: each method of the contract is called with values generated
// from its params schema, and each result is validated against its result schema.
//
// The validator is santhosh-tekuri/jsonschema (draft 2020-12), which the module already
// requires for package contract's tests. adapterctl is a program, not a library a host
// imports, so using it here adds nothing to any host's dependencies.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/adapterkit/adapterkit/cmd/adapterctl/internal/contractgen"
	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/wire"
)

// contractDoc is where check --contract is explained.
const contractDoc = "docs/contracts.md#check-an-adapter-against-the-contract"

// contractCheck is one method of the contract to check.
type contractCheck struct {
	method  string
	service string
	version int
	values  []contractgen.Value
	result  *jsonschema.Schema
	model   *contractgen.Model
	typ     string // the result's type in model
}

// loadContract reads a document of adapterctl contract schema.
func loadContract(file string) ([]contractCheck, error) {
	text, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	model, err := contractgen.Read(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "mem:///contract.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var out []contractCheck
	for i, s := range model.Services {
		for j, m := range s.Methods {
			res, err := c.Compile(fmt.Sprintf("%s#/services/%d/methods/%d/result", url, i, j))
			if err != nil {
				return nil, fmt.Errorf("%s: the result schema of %s: %w", file, m.Name, err)
			}
			out = append(out, contractCheck{method: m.Name, service: s.ID, version: s.Version,
				values: model.Values(m.Params), result: res, model: model, typ: m.Result})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: the contract has no method", file)
	}
	return out, nil
}

// contractChecks calls every method of the contract with its cases and records one
// check per method: "contract METHOD".
func (c *checker) contractChecks(ctx context.Context, s *session) {
	for _, m := range c.contract {
		name := "contract " + m.method
		if c.catalog == nil {
			c.contractResult(name, statusSkip, "needs an accepted catalog (see handshake and catalog)")
			continue
		}
		if why := catalogHas(c.catalog, m); why != "" {
			c.contractResult(name, statusFail, why)
			continue
		}
		if err := s.broken(); err != nil {
			c.contractResult(name, statusSkip, fmt.Sprintf("the connection broke before this check: %v", err))
			continue
		}
		var problems, refused []string
		results := 0
		for _, v := range m.values {
			id, err := s.request(m.method, v.JSON)
			var reply proto.Message
			if err == nil {
				reply, err = s.await(ctx, id, c.timeout)
			}
			switch {
			case err != nil:
				problems = append(problems, fmt.Sprintf("%s: no reply: %v", v.Case, err))
			case reply.Type == proto.TypeError && reply.Code == wire.CodeInvalid && strings.HasPrefix(reply.Message, "params: "):
				// The SDKs' own decoding refuses with "params: ..." (a method's own rules
				// with their own words): the adapter's types are not the contract's.
				problems = append(problems, fmt.Sprintf("%s: params the contract accepts refused by the adapter's decoding: %s", v.Case, short(reply.Message)))
			case reply.Type == proto.TypeError:
				refused = append(refused, fmt.Sprintf("%s: %s %s", v.Case, reply.RawCode, short(reply.Message)))
			default:
				results++
				if why := m.check(reply.Value); why != "" {
					problems = append(problems, v.Case+": "+why)
				}
			}
			if len(problems) > 0 {
				break // the first problem is the one to fix; the session may be unusable
			}
		}
		if len(refused) > 3 {
			refused = append(refused[:3], fmt.Sprintf("and %d more", len(refused)-3))
		}
		switch {
		case len(problems) > 0:
			c.contractResult(name, statusFail, strings.Join(problems, "; "))
		case results == 0:
			c.contractResult(name, statusSkip, "every case was answered with an error, so no result could be validated: "+strings.Join(refused, ", "))
		default:
			detail := fmt.Sprintf("%s answered, each result valid against the result schema", count(results, "case", "cases"))
			if len(refused) > 0 {
				detail += "; answered with an error: " + strings.Join(refused, ", ")
			}
			c.contractResult(name, statusPass, detail)
		}
	}
}

func (c *checker) contractResult(name, status, detail string) {
	c.contractResults = append(c.contractResults, checkResult{Name: name, Rules: []string{}, Status: status, Detail: detail, Docs: []string{contractDoc}})
}

// catalogHas says why the catalog does not offer the method as the contract has it, or "".
func catalogHas(cat *wire.Catalog, m contractCheck) string {
	for _, s := range cat.Services {
		if s.ID != m.service {
			continue
		}
		if s.Version != m.version {
			return fmt.Sprintf("the catalog has service %s version %d, the contract version %d", s.ID, s.Version, m.version)
		}
		for _, name := range s.Methods {
			if name == m.method {
				return ""
			}
		}
		return fmt.Sprintf("service %s of the catalog has no method %s", s.ID, m.method)
	}
	return fmt.Sprintf("the catalog has no service %s", m.service)
}

// check validates a result against the result schema: "" when it is valid, else the
// first problem, named: a wrong type, an extra member, a value out of the contract.
func (m contractCheck) check(value []byte) string {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(value))
	if err != nil {
		return fmt.Sprintf("the result is not JSON: %v", err)
	}
	err = m.result.Validate(inst)
	var ve *jsonschema.ValidationError
	if err == nil {
		if where := m.model.Missing(m.typ, value); where != "" {
			return "missing member at " + where
		}
		return ""
	}
	if !errors.As(err, &ve) {
		return err.Error()
	}
	leaf := firstLeaf(ve)
	at := "/" + strings.Join(leaf.InstanceLocation, "/")
	switch k := leaf.ErrorKind.(type) {
	case *kind.Type:
		return fmt.Sprintf("wrong type at %s: %s, the contract wants %s", at, k.Got, strings.Join(k.Want, " or "))
	case *kind.AdditionalProperties:
		return fmt.Sprintf("extra member at %s: %s (the contract has no such member)", at, strings.Join(k.Properties, ", "))
	}
	return fmt.Sprintf("out of the contract at %s: %s", at, strings.TrimSpace(leaf.Error()))
}

// firstLeaf returns the deepest first cause of a validation error.
func firstLeaf(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	for len(e.Causes) > 0 {
		e = e.Causes[0]
	}
	return e
}
