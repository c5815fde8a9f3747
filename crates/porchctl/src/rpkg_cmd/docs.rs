//! Long help and examples of the `rpkg` commands (upstream porchctl's texts, with its
//! current flags).

pub const INIT_LONG: &str = "Initializes a new package in a repository.

  porchctl rpkg init PACKAGE_NAME [flags]

Args:

  PACKAGE_NAME:
    The name of the new package.

Flags:

  --repository
    Repository in which the new package will be created.

  --workspace
    Workspace of the new package.

  --description
    Short description of the package.

  --keywords
    List of keywords for the package.

  --site
    Link to page with information about the package.";

pub const INIT_EXAMPLES: &str = "Examples:
  # create a new package named foo in the repository blueprint.
  $ porchctl rpkg init foo --namespace=default --repository=blueprint --workspace=v1";

pub const CLONE_LONG: &str = "Create a clone of an existing package revision.

  porchctl rpkg clone SOURCE_PACKAGE_REV TARGET_PACKAGE_NAME [flags]

Args:

  SOURCE_PACKAGE_REV:
    The source package that will be cloned to create the new package revision.
    The types of sources are supported:

      * OCI: A URI to a OCI repository must be provided.
        oci://oci-repository/package-name
      * Git: A URI to a git repository must be provided, optionally with the
        directory and ref of the package: <url>.git/<directory>@<ref>
        https://git-repository.git/package-name@package-name/v1
      * Package: The name of a package revision already available in the
        repository.
        blueprints.basens.v1

  TARGET_PACKAGE_NAME:
    The name of the new package.

Flags:

  --directory
    Directory within the repository where the upstream package revision is
    located (git only; default /).

  --ref
    Ref in the repository where the upstream package revision is located
    (branch, tag, SHA; git only; default main).

  --repository
    Repository to which package revision will be cloned (downstream repository).

  --workspace
    Workspace for the new package. The default value is v1.

  --secret-ref
    Name of the secret for basic authentication with the upstream git repository.";

pub const CLONE_EXAMPLES: &str = "Examples:
  # clone the package revision blueprints.basens.v1 as foo into the deployments repository
  $ porchctl rpkg clone blueprints.basens.v1 foo --repository=deployments --workspace=first-draft

  # clone a package straight from git, directory and ref in the URL
  $ porchctl rpkg clone https://github.com/repo/blueprint.git/base@base/v0 bar --repository=blueprint

  # the same with flags
  $ porchctl rpkg clone https://github.com/repo/blueprint.git bar --repository=blueprint --ref=base/v0 --directory=base";

pub const COPY_LONG: &str = "Create a new package revision from an existing one.

  porchctl rpkg copy SOURCE_PACKAGE_REV_NAME [flags]

Args:

  SOURCE_PACKAGE_REV_NAME:
    The name of the (published) package revision that will be used as the
    source for creating a new package revision of the same package.

Flags:

  --workspace
    Workspace for the new package revision.";

pub const COPY_EXAMPLES: &str = "Examples:
  # create a new revision of package blueprints.basens.v1 in workspace v10
  $ porchctl rpkg copy blueprints.basens.v1 --workspace=v10 --namespace=default";

pub const GET_LONG: &str = "List package revisions in registered repositories.

  porchctl rpkg get [PACKAGE_REV_NAME...] [flags]

Args:

  PACKAGE_REV_NAME:
    The name of a package revision. If provided, only that specific
    package revision will be shown. Defaults to showing all package
    revisions from all repositories.

Flags:

  --name
    Name of the packages to get (exact match).

  --revision
    Revision of the packages to get (-1 is the placeholder revision on the
    registered branch).

  --workspace
    WorkspaceName of the packages to get.

  --show-kptfile
    Print the root Kptfile of the one named package revision.";

pub const GET_EXAMPLES: &str = "Examples:
  # get a specific package revision in the default namespace
  $ porchctl rpkg get blueprints.basens.v1 --namespace=default

  # get all package revisions in the bar namespace
  $ porchctl rpkg get --namespace=bar

  # get all revision 1 package revisions of package basens
  $ porchctl rpkg get --name=basens --revision=1";

pub const PULL_LONG: &str = "Pull the content of the package revision.

  porchctl rpkg pull PACKAGE_REV_NAME [DIR] [flags]

Args:

  PACKAGE_REV_NAME:
    The name of a an existing package revision in a repository.

  DIR:
    A local directory where the package manifests will be written.
    If not provided, the manifests are written to stdout.";

pub const PULL_EXAMPLES: &str = "Examples:
  # pull the content of package revision blueprints.basens.v1
  $ porchctl rpkg pull blueprints.basens.v1 --namespace=default";

pub const PUSH_LONG: &str = "Push resources to a package revision.

  porchctl rpkg push PACKAGE_REV_NAME [DIR] [flags]

Args:

  PACKAGE_REV_NAME:
    The name of a an existing package revision in a repository.

  DIR:
    A local directory with the new manifest. If the manifests have be read from stdin, use '-' in place of DIR.";

pub const PUSH_EXAMPLES: &str = "Examples:
  # update the package revision deployments.istions.v1 with the resources in ./package
  $ porchctl rpkg push deployments.istions.v1 ./package --namespace=default

  # update it with a ResourceList read from stdin
  $ porchctl rpkg pull deployments.istions.v1 | porchctl rpkg push deployments.istions.v1 -";

pub const PROPOSE_LONG: &str = "Propose that a package revision should be published.

  porchctl rpkg propose [PACKAGE_REV_NAME...] [flags]

Args:

  PACKAGE_REV_NAME...:
    The name of one or more package revisions. If more than
    one is provided, they must be space-separated.";

pub const PROPOSE_EXAMPLES: &str = "Examples:
  # propose that package revision blueprints.basens.ws1 should be published
  $ porchctl rpkg propose blueprints.basens.ws1 --namespace=default";

pub const APPROVE_LONG: &str = "Approve a proposal to publish a package revision.

  porchctl rpkg approve [PACKAGE_REV_NAME...] [flags]

Args:

  PACKAGE_REV_NAME...:
    The name of one or more package revisions. If more than
    one is provided, they must be space-separated.";

pub const APPROVE_EXAMPLES: &str = "Examples:
  # approve package revision blueprints.basens.ws1
  $ porchctl rpkg approve blueprints.basens.ws1 --namespace=default";

pub const REJECT_LONG: &str = "Reject a proposal to publish or delete a package revision.

  porchctl rpkg reject [PACKAGE_REV_NAME...] [flags]

Args:

  PACKAGE_REV_NAME...:
    The name of one or more package revisions. If more than
    one is provided, they must be space-separated.";

pub const REJECT_EXAMPLES: &str = "Examples:
  # reject the proposal for package revision blueprints.basens.ws1
  $ porchctl rpkg reject blueprints.basens.ws1 --namespace=default";

pub const PROPOSE_DELETE_LONG: &str = "Propose deletion of a published package revision.

  porchctl rpkg propose-delete PACKAGE_REV_NAME... [flags]

Args:

  PACKAGE_REV_NAME...:
  The name of one or more package revisions. If more than
  one is provided, they must be space-separated.";

pub const PROPOSE_DELETE_EXAMPLES: &str = "Examples:
  # propose published package revision blueprints.basens.v1 for deletion
  $ porchctl rpkg propose-delete blueprints.basens.v1 --namespace=default";

pub const DEL_LONG: &str = "Delete a package revision.

  porchctl rpkg del PACKAGE_REV_NAME... [flags]

Args:

  PACKAGE_REV_NAME...:
    The name of one or more package revisions. If more than
    one is provided, they must be space-separated.";

pub const DEL_EXAMPLES: &str = "Examples:
  # remove package revision blueprints.basens.ws1 from the default namespace
  $ porchctl rpkg del blueprints.basens.ws1 --namespace=default";

pub const UPGRADE_LONG: &str =
    "Upgrade a downstream package revision to a more recent revision of its upstream package.

  porchctl rpkg upgrade SOURCE_PACKAGE_REV_NAME [flags]

Args:

  SOURCE_PACKAGE_REV_NAME:
    The target downstream package revision to be upgraded (published).

Flags:

  --revision
    The revision number of the upstream package that the target downstream
    package should be upgraded to (default: the latest published revision).

  --workspace
    The workspace name of the new package revision.

  --strategy
    resource-merge (default), fast-forward, force-delete-replace or copy-merge.

  --discover
    If set, list package revisions that need updates rather than performing
    an update. 'upstream' lists downstream package revisions that have upstream
    updates available; 'downstream' lists upstream package revisions whose
    downstream package revisions need to be updated. Package revision names may
    be given to restrict the listing.";

pub const UPGRADE_EXAMPLES: &str = "Examples:
  # upgrade deployments.istions.v1 to revision 3 of its upstream, as workspace v2
  $ porchctl rpkg upgrade deployments.istions.v1 --revision=3 --workspace=v2

  # see available upstream updates for all your downstream packages
  $ porchctl rpkg upgrade --discover=upstream

  # see which downstream packages of blueprints.basens.v1 can be updated
  $ porchctl rpkg upgrade --discover=downstream blueprints.basens.v1";

pub const UPDATE_LONG: &str =
    "Update a downstream Draft package revision to another revision of its upstream package.

  porchctl rpkg update SOURCE_PACKAGE [flags]

Older porchctl's command, kept for the scripts written against it; `rpkg upgrade` makes a
new Draft from a published revision instead.

Args:

  SOURCE_PACKAGE:
    The Draft to update. It must have been cloned: from a registered package
    revision (an update task naming the new upstream revision is appended), or
    from a git URL (the clone task's ref becomes v<revision>). The server merges
    the Draft with the strategy its clone task names (resource-merge by default).

Flags:

  --revision
    The revision number of the upstream package to update to (required).

  --discover
    If set, list package revisions that need updates rather than performing
    an update. 'upstream' lists downstream package revisions that have upstream
    updates available; 'downstream' lists upstream package revisions whose
    downstream package revisions need to be updated.";

pub const UPDATE_EXAMPLES: &str = "Examples:
  # update the draft deployments.istions.v1 to revision 3 of its upstream
  $ porchctl rpkg update deployments.istions.v1 --revision=3

  # see available upstream updates for all your downstream packages
  $ porchctl rpkg update --discover=upstream";
