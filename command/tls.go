package command

// The `nomad tls` group: a self-signed CA and the agents' certificates,
// for setting up TLS without other tools.

const tlsGroupHelp = `
Usage: nomad tls <subcommand> <subcommand> [options]

  Create a self-signed certificate authority and the certificates that
  servers, clients and the CLI present to each other, for the agent's tls
  block and the CLI's -ca-cert, -client-cert and -client-key flags.

  Create the CA, then a certificate for each role:

      $ nomad tls ca create
      $ nomad tls cert create -server
      $ nomad tls cert create -client
      $ nomad tls cert create -cli

  Files are written to the current directory and never overwritten.
  'nomad tls ca info' and 'nomad tls cert info' show what a file holds.
  Run 'nomad tls <subcommand> <subcommand> -help' for the flags.
`

const tlsCAGroupHelp = `
Usage: nomad tls ca <subcommand> [options]

  Create the certificate authority that signs the cluster's certificates,
  or show what a CA certificate holds.

      $ nomad tls ca create
      $ nomad tls ca info nomad-agent-ca.pem
`

const tlsCertGroupHelp = `
Usage: nomad tls cert <subcommand> [options]

  Create certificates for servers, clients and the CLI, signed by the CA
  that 'nomad tls ca create' made.

      $ nomad tls cert create -server -region global
      $ nomad tls cert info global-server-nomad.pem
`
