//! The schema of one resource type: attributes and nested blocks, and path lookups in them.

use std::collections::BTreeMap;

use super::cty::AttrType;

/// Whether an attribute is set by the configuration, by the provider, or by either.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// The configuration must set it.
    Required,
    /// The configuration may set it; left unset, it stays null.
    Optional,
    /// Only the provider sets it (an exported attribute).
    Computed,
    /// The configuration may set it; left unset, the provider fills it in.
    OptionalComputed,
}

impl Presence {
    /// From the three flags of the schema JSON; `None` for a combination Terraform rejects.
    pub fn from_flags(required: bool, optional: bool, computed: bool) -> Option<Self> {
        match (required, optional, computed) {
            (true, false, false) => Some(Self::Required),
            (false, true, false) => Some(Self::Optional),
            (false, false, true) => Some(Self::Computed),
            (false, true, true) => Some(Self::OptionalComputed),
            _ => None,
        }
    }

    /// Whether the configuration may set the attribute (required or optional).
    pub fn is_settable(self) -> bool {
        self != Self::Computed
    }
}

/// How the items of a nested block (or of nested attributes) are collected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NestingMode {
    /// At most one item, as an object.
    Single,
    /// At most one item, whose absent fields read as null rather than the item being null.
    Group,
    /// Ordered items; the order matters.
    List,
    /// Unordered items; the order does not matter and duplicates merge.
    Set,
    /// Items keyed by the block's label.
    Map,
}

impl NestingMode {
    /// From the schema JSON's `nesting_mode` string.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "single" => Some(Self::Single),
            "group" => Some(Self::Group),
            "list" => Some(Self::List),
            "set" => Some(Self::Set),
            "map" => Some(Self::Map),
            _ => None,
        }
    }
}

/// One attribute of a block.
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute {
    /// The value's type.
    pub ty: AttrType,
    /// Who sets it.
    pub presence: Presence,
    /// Terraform hides its value in plans and output.
    pub sensitive: bool,
    /// The value is sent to the provider but never stored in state (Terraform 1.11+).
    pub write_only: bool,
    /// The provider's description, when the source has one.
    pub description: Option<String>,
    /// For an attribute holding objects (a list, set or map of objects, or one object): the
    /// objects' fields, so paths can reach inside. Such attributes may be written in block syntax.
    pub nested: Option<NestedAttributes>,
}

impl Attribute {
    /// An attribute of the given type; objects inside it get fields via [`NestedAttributes::from_type`].
    pub fn from_type(ty: AttrType, presence: Presence) -> Self {
        let nested = NestedAttributes::from_type(&ty, presence);
        Self::plain(ty, presence, nested)
    }

    /// An attribute holding the objects `nested` describes; its type follows from them.
    pub fn from_nested(nested: NestedAttributes, presence: Presence) -> Self {
        let ty = nested.object_type();
        Self::plain(ty, presence, Some(nested))
    }

    /// An attribute that is neither sensitive nor write-only and has no description.
    fn plain(ty: AttrType, presence: Presence, nested: Option<NestedAttributes>) -> Self {
        Self {
            ty,
            presence,
            sensitive: false,
            write_only: false,
            description: None,
            nested,
        }
    }

    /// This attribute when the path ends here, else the field the rest of the path names.
    fn member(&self, rest: Option<&str>) -> Option<Member<'_>> {
        match rest {
            None => Some(Member::Attribute(self)),
            Some(rest) => self.nested.as_ref()?.member(rest),
        }
    }
}

/// The fields of the objects an attribute holds, with how they are collected.
#[derive(Debug, Clone, PartialEq)]
pub struct NestedAttributes {
    /// Single, list, set or map.
    pub nesting: NestingMode,
    /// The objects' fields.
    pub attributes: BTreeMap<String, Attribute>,
}

impl NestedAttributes {
    /// The fields of an object-holding type (`object`, or a list, set or map of objects).
    ///
    /// A type carries no per-field flags: fields of a computed-only attribute are computed,
    /// and other fields optional, as Terraform treats them when they are written as blocks.
    pub fn from_type(ty: &AttrType, parent: Presence) -> Option<Self> {
        let nesting = match ty {
            AttrType::Object(_) => NestingMode::Single,
            AttrType::List(_) => NestingMode::List,
            AttrType::Set(_) => NestingMode::Set,
            AttrType::Map(_) => NestingMode::Map,
            _ => return None,
        };
        let AttrType::Object(fields) = ty.element().unwrap_or(ty) else {
            return None;
        };
        let presence = if parent == Presence::Computed {
            Presence::Computed
        } else {
            Presence::Optional
        };
        let attributes = fields
            .iter()
            .map(|(name, ty)| (name.clone(), Attribute::from_type(ty.clone(), presence)))
            .collect();
        Some(Self {
            nesting,
            attributes,
        })
    }

    /// The type of the value these fields make up, e.g. `set(object({...}))`.
    pub fn object_type(&self) -> AttrType {
        let object = AttrType::Object(
            self.attributes
                .iter()
                .map(|(k, a)| (k.clone(), a.ty.clone()))
                .collect(),
        );
        match self.nesting {
            NestingMode::Single | NestingMode::Group => object,
            NestingMode::List => AttrType::List(Box::new(object)),
            NestingMode::Set => AttrType::Set(Box::new(object)),
            NestingMode::Map => AttrType::Map(Box::new(object)),
        }
    }

    fn member(&self, path: &str) -> Option<Member<'_>> {
        let (head, rest) = split_path(path);
        self.attributes.get(head)?.member(rest)
    }
}

/// A block's attributes and nested blocks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Block {
    /// Attributes by name.
    pub attributes: BTreeMap<String, Attribute>,
    /// Nested block types by name.
    pub blocks: BTreeMap<String, NestedBlock>,
}

impl Block {
    /// The attribute or nested block at a dotted path such as `ingress.from_port`.
    ///
    /// A path goes through nested blocks and through attributes that hold objects.
    pub fn member(&self, path: &str) -> Option<Member<'_>> {
        let (head, rest) = split_path(path);
        if let Some(block) = self.blocks.get(head) {
            return match rest {
                None => Some(Member::Block(block)),
                Some(rest) => block.block.member(rest),
            };
        }
        self.attributes.get(head)?.member(rest)
    }
}

/// A nested block type: how many items it takes and what each item holds.
#[derive(Debug, Clone, PartialEq)]
pub struct NestedBlock {
    /// How items are collected.
    pub nesting: NestingMode,
    /// The fewest items the configuration must write (1 for a required block).
    pub min_items: u64,
    /// The most items allowed, when limited.
    pub max_items: Option<u64>,
    /// What each item holds.
    pub block: Block,
}

/// What a path names: an attribute or a nested block.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Member<'a> {
    /// An attribute (possibly a field of an object-holding attribute).
    Attribute(&'a Attribute),
    /// A nested block type.
    Block(&'a NestedBlock),
}

/// The schema of one resource type.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceSchema {
    /// The provider's schema version for this type's state, when the source says.
    pub version: Option<u64>,
    /// The resource block's attributes and nested blocks.
    pub block: Block,
}

impl ResourceSchema {
    /// The attribute or nested block at a dotted path.
    pub fn member(&self, path: &str) -> Option<Member<'_>> {
        self.block.member(path)
    }

    /// The attribute at a dotted path; `None` when the path names a block or nothing.
    pub fn attribute(&self, path: &str) -> Option<&Attribute> {
        match self.member(path)? {
            Member::Attribute(attribute) => Some(attribute),
            Member::Block(_) => None,
        }
    }

    /// Whether the path names something written as repeated blocks whose order does not
    /// matter: a set-nested block, or a set-of-objects attribute written in block syntax.
    pub fn is_set_block(&self, path: &str) -> bool {
        match self.member(path) {
            Some(Member::Block(block)) => block.nesting == NestingMode::Set,
            Some(Member::Attribute(attribute)) => attribute
                .nested
                .as_ref()
                .is_some_and(|n| n.nesting == NestingMode::Set),
            None => false,
        }
    }
}

fn split_path(path: &str) -> (&str, Option<&str>) {
    match path.split_once('.') {
        Some((head, rest)) => (head, Some(rest)),
        None => (path, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(fields: &[(&str, AttrType)]) -> AttrType {
        AttrType::Object(
            fields
                .iter()
                .map(|(k, t)| ((*k).to_owned(), t.clone()))
                .collect(),
        )
    }

    fn sample() -> ResourceSchema {
        let rule = object(&[
            ("from_port", AttrType::Number),
            ("cidr_blocks", AttrType::List(Box::new(AttrType::String))),
        ]);
        let mut block = Block::default();
        block.attributes.insert(
            "arn".into(),
            Attribute::from_type(AttrType::String, Presence::Computed),
        );
        block.attributes.insert(
            "ingress".into(),
            Attribute::from_type(AttrType::Set(Box::new(rule)), Presence::OptionalComputed),
        );
        let mut inner = Block::default();
        inner.attributes.insert(
            "device_name".into(),
            Attribute::from_type(AttrType::String, Presence::Required),
        );
        let device = NestedBlock {
            nesting: NestingMode::List,
            min_items: 0,
            max_items: Some(1),
            block: inner,
        };
        block.blocks.insert("root_block_device".into(), device);
        ResourceSchema {
            version: Some(1),
            block,
        }
    }

    #[test]
    fn presence_from_flags() {
        assert_eq!(
            Presence::from_flags(false, true, true),
            Some(Presence::OptionalComputed)
        );
        assert_eq!(Presence::from_flags(true, true, false), None);
        assert_eq!(Presence::from_flags(false, false, false), None);
        assert!(Presence::Optional.is_settable() && !Presence::Computed.is_settable());
    }

    #[test]
    fn nesting_modes_parse() {
        assert_eq!(NestingMode::parse("set"), Some(NestingMode::Set));
        assert_eq!(NestingMode::parse("group"), Some(NestingMode::Group));
        assert_eq!(NestingMode::parse("bag"), None);
    }

    #[test]
    fn paths_reach_blocks_and_object_fields() {
        let schema = sample();
        assert!(matches!(
            schema.member("root_block_device"),
            Some(Member::Block(_))
        ));
        assert_eq!(
            schema
                .attribute("root_block_device.device_name")
                .map(|a| a.presence),
            Some(Presence::Required)
        );
        let port = schema
            .attribute("ingress.from_port")
            .expect("from_port is found");
        assert_eq!(
            (port.ty.clone(), port.presence),
            (AttrType::Number, Presence::Optional)
        );
        assert!(schema.attribute("root_block_device").is_none());
        assert!(schema.attribute("arn.more").is_none());
        assert!(schema.attribute("nope").is_none());
    }

    #[test]
    fn set_blocks_include_set_of_object_attributes() {
        let schema = sample();
        assert!(schema.is_set_block("ingress"));
        assert!(!schema.is_set_block("root_block_device"));
        assert!(!schema.is_set_block("arn"));
        assert!(!schema.is_set_block("missing"));
    }

    #[test]
    fn fields_of_computed_objects_are_computed() {
        let ty = AttrType::List(Box::new(object(&[("address", AttrType::String)])));
        let attribute = Attribute::from_type(ty, Presence::Computed);
        let nested = attribute.nested.expect("objects get fields");
        assert_eq!(nested.nesting, NestingMode::List);
        assert_eq!(nested.attributes["address"].presence, Presence::Computed);
    }

    #[test]
    fn object_type_follows_nesting() {
        let mut attributes = BTreeMap::new();
        attributes.insert(
            "port".to_owned(),
            Attribute::from_type(AttrType::Number, Presence::Required),
        );
        let nested = NestedAttributes {
            nesting: NestingMode::Map,
            attributes,
        };
        assert_eq!(
            Attribute::from_nested(nested, Presence::Optional)
                .ty
                .to_string(),
            "map(object({port = number}))"
        );
        assert!(
            NestedAttributes::from_type(
                &AttrType::List(Box::new(AttrType::String)),
                Presence::Optional
            )
            .is_none()
        );
    }
}
