package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/signing"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skillrun"
)

// nameVersion splits NAME[@VERSION] [VERSION]; the version defaults to
// "latest".
func nameVersion(args []string) (string, string) {
	name, version, _ := strings.Cut(args[0], "@")
	if len(args) > 1 {
		version = args[1]
	}
	if version == "" {
		version = "latest"
	}
	return name, version
}

// manifestDigest recomputes a manifest's digest from its files, trusting
// no id the server states.
func manifestDigest(m *skillsvcv1.SkillManifest) string {
	files := make([]skillmd.FileDigest, len(m.GetFiles()))
	for i, f := range m.GetFiles() {
		files[i] = skillmd.FileDigest{Rel: f.GetPath(), Size: f.GetSize(), SHA256: f.GetSha256()}
	}
	return skillmd.ManifestDigest(files)
}

func (a *app) signCmd() *cobra.Command {
	var keyFile, passwordFile string
	cmd := &cobra.Command{
		Use:   "sign NAME[@VERSION] [VERSION] --key FILE|KMS_URI",
		Short: "Sign a version of a skill and attach the signature",
		Long: `sign signs the manifest digest of VERSION (an id, a unique prefix or a label; "latest"
by default, a pending proposal's id too) of skill NAME in the --library with the private key in FILE
(PEM: unencrypted PKCS#8 or SEC 1, or cosign's encrypted key file from cosign generate-key-pair,
its password from --password-file or $COSIGN_PASSWORD; ECDSA P-256 or Ed25519), or with a KMS key
(awskms://[ENDPOINT]/KEY_ID_OR_ALIAS, signing in AWS KMS with the AWS SDK's usual credentials), as a
Sigstore bundle, and attaches it to the version (LibraryService.AttachSignature). The digest is recomputed from the version's manifest,
and the server verifies the bundle against the files it holds before keeping it. A library whose
policy requires a signature (--library.require-signature) lets the version go live once it is
signed by a named key: rollback to it, or approve it.`,
		Example: `  openssl genpkey -algorithm ed25519 -out release.key
  openssl pkey -in release.key -pubout -out release.pub
  skillctl sign pdf@sha256:3f2a9c1b7d4e --key release.key --library shared
  COSIGN_PASSWORD=... skillctl sign pdf --key cosign.key --library shared
  skillctl sign pdf --key awskms:///alias/skills-release --library shared`,
		Args:              cobra.RangeArgs(1, 2),
		ValidArgsFunction: a.completeSkillNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			if keyFile == "" {
				return usageErr(errors.New("--key FILE|KMS_URI is required"))
			}
			name, version := nameVersion(args)
			ctx, cancel, err := a.open(cmd, true)
			if err != nil {
				return err
			}
			defer cancel()
			var noPassword bool
			signer, err := signing.LoadSigner(ctx, keyFile, a.keyPassword(passwordFile, &noPassword))
			if noPassword && errors.Is(err, signing.ErrPassword) {
				err = fmt.Errorf("%w: the key is encrypted; set COSIGN_PASSWORD or give --password-file", signing.ErrPassword)
			}
			if err != nil {
				if signing.IsKMS(keyFile) && !errors.Is(err, signing.ErrPassword) {
					return err
				}
				return usageErr(err)
			}
			got, err := a.library().GetSkillVersion(ctx, &skillsvcv1.GetSkillVersionRequest{Library: a.libraryRef(), Name: name, Version: version})
			if err != nil {
				return err
			}
			v := got.GetVersion()
			bundle, err := signer.Sign(ctx, v.GetName(), manifestDigest(v.GetManifest()))
			if err != nil {
				return err
			}
			resp, err := a.library().AttachSignature(ctx, &skillsvcv1.AttachSignatureRequest{
				Library: a.libraryRef(), Name: name, Version: v.GetId(), Bundle: bundle, PublicKey: signer.Public().PEM(),
			})
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(resp)
			}
			a.printVersion("signed (key "+signer.Public().ID+")", resp.GetVersion(), nil)
			return nil
		},
	}
	cmd.Flags().StringVar(&keyFile, "key", "", "the private key: a PEM file (cosign's encrypted ones too) or awskms://[ENDPOINT]/KEY_ID_OR_ALIAS")
	cmd.Flags().StringVar(&passwordFile, "password-file", "", "the password of an encrypted (cosign) key file, in a file (default: $COSIGN_PASSWORD)")
	return cmd
}

// keyPassword is the password of an encrypted key: the first line of
// file, else $COSIGN_PASSWORD as cosign reads it. Unset, it is the empty
// password (cosign's keys made with COSIGN_PASSWORD= have it), and asked
// reports that it was.
func (a *app) keyPassword(file string, asked *bool) func() ([]byte, error) {
	return func() ([]byte, error) {
		if file != "" {
			data, err := os.ReadFile(file)
			if err != nil {
				return nil, err
			}
			line, _, _ := strings.Cut(string(data), "\n")
			return []byte(strings.TrimSuffix(line, "\r")), nil
		}
		p := a.getenv("COSIGN_PASSWORD")
		*asked = p == ""
		return []byte(p), nil
	}
}

func (a *app) verifyCmd() *cobra.Command {
	var keyFile string
	var maxBytes int64
	cmd := &cobra.Command{
		Use:   "verify NAME[@VERSION] [VERSION] --key PUB",
		Short: "Verify a version's signature offline against a public key",
		Long: `verify checks, on this machine, that a signature attached to VERSION ("latest" by default)
of skill NAME was made by the public key in PUB (PEM, or a KMS URI as sign takes) over the version's files: it exports the
version's files, recomputes their digests and the manifest digest from them, and verifies each
attached Sigstore bundle against that digest and the key. It trusts neither the server's
verification nor the digest the server states. Exit status 0 when a signature verifies.`,
		Example:           `  skillctl verify pdf@latest --key release.pub --library shared`,
		Args:              cobra.RangeArgs(1, 2),
		ValidArgsFunction: a.completeSkillNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			if keyFile == "" {
				return usageErr(errors.New("--key PUB is required"))
			}
			name, version := nameVersion(args)
			ctx, cancel, err := a.open(cmd, true)
			if err != nil {
				return err
			}
			defer cancel()
			key, err := signing.LoadPublicKey(ctx, "", keyFile)
			if err != nil {
				if signing.IsKMS(keyFile) {
					return err
				}
				return usageErr(err)
			}
			got, err := a.library().GetSkillVersion(ctx, &skillsvcv1.GetSkillVersionRequest{Library: a.libraryRef(), Name: name, Version: version})
			if err != nil {
				return err
			}
			v := got.GetVersion()
			stated := manifestDigest(v.GetManifest())
			// The files themselves, hashed here.
			dir, err := os.MkdirTemp("", "skillctl-verify-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			stream, err := a.skills().ExportSkill(ctx, &skillsvcv1.ExportSkillRequest{Path: name, Version: v.GetId()})
			if err != nil {
				return err
			}
			r := &skillrun.ExportReader{Recv: stream.Recv}
			if _, _, err := skillrun.ExtractSkill(r, dir, maxBytes); err != nil {
				if r.Err != nil {
					return r.Err
				}
				if errors.As(err, new(*skillrun.ArchiveTooLargeError)) {
					return fmt.Errorf("%w (--max-bytes)", err)
				}
				return err
			}
			if r.Err != nil && !errors.Is(r.Err, io.EOF) {
				return r.Err
			}
			local, err := readSkillDir(ctx, dir)
			if err != nil {
				return err
			}
			files := make([]skillmd.FileDigest, 0, len(local.Files))
			for _, f := range local.Files {
				b, err := os.ReadFile(f.Abs)
				if err != nil {
					return err
				}
				sum := sha256.Sum256(b)
				files = append(files, skillmd.FileDigest{Rel: f.Rel, Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:])})
			}
			digest := skillmd.ManifestDigest(files)
			if digest != stated {
				return fmt.Errorf("the exported files' digest %s differs from the manifest's %s", digest, stated)
			}
			var errs []error
			for _, sg := range v.GetSignatures() {
				if _, err := signing.Verify(sg.GetBundle(), digest, []signing.PublicKey{key}); err != nil {
					errs = append(errs, fmt.Errorf("signature by key %s: %w", sg.GetKeyId(), err))
					continue
				}
				if a.jsonOut {
					return a.printJSON(got)
				}
				if !a.quiet {
					fmt.Fprintf(a.stdout, "verified %s version %s (files digest %s) signed by key %s\n", inert(v.GetName()), inert(v.GetId()), digest, key.ID)
				}
				return nil
			}
			if len(errs) == 0 {
				return fmt.Errorf("%s version %s has no signature", v.GetName(), v.GetId())
			}
			return fmt.Errorf("no signature of %s version %s verifies with key %s: %w", v.GetName(), v.GetId(), key.ID, errors.Join(errs...))
		},
	}
	cmd.Flags().StringVar(&keyFile, "key", "", "the public key: a PEM file or awskms://[ENDPOINT]/KEY_ID_OR_ALIAS (its public key fetched from the KMS)")
	cmd.Flags().Int64Var(&maxBytes, "max-bytes", defaultMaxPullBytes, "refuse an archive unpacking to more than this")
	return cmd
}
